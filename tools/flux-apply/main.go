// flux-apply applies a directory of manifests the way Flux's kustomize-controller
// reconciles a Kustomization: with Flux's own apply library (fluxcd/pkg/ssa),
// ResourceManager.ApplyAllStaged and the options kustomize-controller sets —
// its field manager and owner labels, its exclusion, if-not-present and force
// selectors, and its cleanup of kubectl's and older Flux field managers. The
// library dry-runs every object of a stage and applies only those whose dry-run
// differs from the live object: that is what decides whether a workload write
// reaches an admission webhook at all.
//
//	flux-apply --kubeconfig FILE --dir DIR [--name NAME] [--namespace NS]
//
// One run is one reconcile. Each object's action (created, configured,
// unchanged, ...) is printed as one JSON line on stdout.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// What kustomize-controller names itself and its API group.
const (
	controllerName = "kustomize-controller"
	kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	// kustomize-controller's default for --concurrent-ssa.
	concurrentSSA = 4
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	dir := flag.String("dir", "", "directory of YAML manifests, the Kustomization's path (required)")
	name := flag.String("name", "apps", "name of the Kustomization, for the owner labels")
	namespace := flag.String("namespace", "flux-system", "namespace of the Kustomization, for the owner labels")
	timeout := flag.Duration("timeout", 2*time.Minute, "time limit of the reconcile")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println("flux-apply (fluxcd/pkg/ssa " + ssaVersion() + ")")
		return
	}
	if *kubeconfig == "" || *dir == "" {
		fmt.Fprintln(os.Stderr, "flux-apply: --kubeconfig and --dir are required")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	changes, err := reconcile(ctx, *kubeconfig, *dir, *name, *namespace)
	for _, change := range changes {
		line, _ := json.Marshal(map[string]string{"subject": change.Subject, "action": string(change.Action)})
		fmt.Println(string(line))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "flux-apply: %v\n", err)
		os.Exit(1)
	}
}

// ssaVersion is the apply library's version as go.mod pins it.
func ssaVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/fluxcd/pkg/ssa" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func reconcile(ctx context.Context, kubeconfig, dir, name, namespace string) ([]ssa.ChangeSetEntry, error) {
	objects, err := readManifests(dir)
	if err != nil {
		return nil, err
	}
	kubeClient, poller, err := clients(kubeconfig)
	if err != nil {
		return nil, err
	}
	manager := ssa.NewResourceManager(kubeClient, poller, ssa.Owner{Field: controllerName, Group: kustomizeGroup})
	manager.SetOwnerLabels(objects, name, namespace)
	manager.SetConcurrency(concurrentSSA)
	if err := normalize.UnstructuredList(objects); err != nil {
		return nil, err
	}
	changeSet, err := manager.ApplyAllStaged(ctx, objects, applyOptions())
	if changeSet == nil {
		return nil, err
	}
	return changeSet.Entries, err
}

// readManifests reads every .yaml/.yml file of dir in name order, as the
// kustomization kustomize-controller generates for a plain directory lists them.
func readManifests(dir string) ([]*unstructured.Unstructured, error) {
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return nil, err
		}
		files = append(files, matches...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .yaml or .yml files in %s", dir)
	}
	sort.Strings(files)
	var objects []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		read, err := ssautil.ReadObjects(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		objects = append(objects, read...)
	}
	return objects, nil
}

func clients(kubeconfig string) (client.Client, *polling.StatusPoller, error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	httpClient, err := rest.HTTPClientFor(restConfig)
	if err != nil {
		return nil, nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(restConfig, httpClient)
	if err != nil {
		return nil, nil, err
	}
	kubeClient, err := client.New(restConfig, client.Options{HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, nil, err
	}
	return kubeClient, polling.NewStatusPoller(kubeClient, mapper, polling.Options{}), nil
}

// applyOptions are the options kustomize-controller passes for a Kustomization
// with spec.force false, no ignore rules and no feature gates set.
func applyOptions() ssa.ApplyOptions {
	options := ssa.DefaultApplyOptions()
	options.ExclusionSelector = map[string]string{
		kustomizeGroup + "/reconcile": "disabled",
		kustomizeGroup + "/ssa":       "Ignore",
	}
	options.IfNotPresentSelector = map[string]string{kustomizeGroup + "/ssa": "IfNotPresent"}
	options.ForceSelector = map[string]string{kustomizeGroup + "/force": "enabled"}
	options.Cleanup = ssa.ApplyCleanupOptions{
		Annotations: []string{
			corev1.LastAppliedConfigAnnotation,
			kustomizeGroup + "/checksum",
			"fluxcd.io/sync-checksum",
		},
		Labels: []string{"fluxcd.io/sync-gc-mark"},
		FieldManagers: []ssa.FieldManager{
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationApply},
			{Name: "kubectl", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: "before-first-apply", OperationType: metav1.ManagedFieldsOperationUpdate},
			{Name: controllerName, OperationType: metav1.ManagedFieldsOperationUpdate},
		},
		Exclusions: map[string]string{kustomizeGroup + "/ssa": "Merge"},
	}
	return options
}
