// cert-manager's cainjector: copies the CA of a Certificate's Secret into the
// caBundle of every MutatingWebhookConfiguration (and validating webhook, API
// service, CRD) annotated with cert-manager.io/inject-ca-from. It sets up
// cert-manager's own injectors on a controller-runtime manager, as cert-manager's
// command does, with one replica and no leader election.
package main

import (
	"context"
	"flag"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util"

	"confighash.local/tools/cert-manager/internal/command"
)

func main() {
	// controller-runtime registers --kubeconfig on the command line itself.
	kubeconfig := flag.Lookup("kubeconfig")
	ctrl.SetLogger(logf.Log)
	command.Main("cert-manager-cainjector", kubeconfig.Value.String, run)
}

func run(ctx context.Context, kubeconfig string) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	// The user agent names the field manager of cainjector's applies: cert-manager-cainjector.
	restConfig := util.RestConfigWithUserAgent(config, "cainjector")
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))
	manager, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme: scheme,
		Cache:  cache.Options{ReaderFailOnMissingInformer: true},
		// Like cert-manager: Secrets are read directly, never cached whole.
		Client:  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	err = cainjector.RegisterAllInjectors(ctx, manager, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	})
	if err != nil {
		return fmt.Errorf("registering the injectors: %w", err)
	}
	logf.FromContext(ctx).Info("starting cainjector", "version", command.Version)
	return manager.Start(ctx)
}
