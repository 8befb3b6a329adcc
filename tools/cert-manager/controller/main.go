// The cert-manager controller, limited to what issues and renews certificates
// from SelfSigned and CA Issuers (the cert-manager overlay's two Issuers): the
// certificates controllers (trigger, key manager, request manager, issuing,
// readiness, revision manager), the CertificateRequest approver and signers for
// SelfSigned and CA, and the Issuer controller. It builds cert-manager's own
// controller context and runs each registered controller the way cert-manager's
// command does, with one replica and no leader election (a test harness runs
// exactly one). ACME, Vault, Venafi and the ingress/gateway shims are left out:
// they would pull every DNS provider's SDK into the build and nothing here
// uses them.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"         // registers the CA issuer's setup
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned" // registers the SelfSigned issuer's setup
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	"confighash.local/tools/cert-manager/internal/command"
)

var enabled = []string{
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	issuing.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
	approver.ControllerName,
	crselfsigned.CRControllerName,
	crca.CRControllerName,
	issuers.ControllerName,
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster to run against (required)")
	workers := flag.Int("concurrent-workers", 5, "workers per controller")
	command.Main("cert-manager-controller", func() string { return *kubeconfig }, func(ctx context.Context, kubeconfig string) error {
		return run(ctx, kubeconfig, *workers)
	})
}

func run(rootCtx context.Context, kubeconfig string, workers int) error {
	log := logf.FromContext(rootCtx)
	log.Info("starting cert-manager controller", "version", command.Version, "controllers", enabled)
	factory, err := controller.NewContextFactory(rootCtx, contextOptions(kubeconfig))
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	group, ctx := errgroup.WithContext(rootCtx)
	known := controller.Known()
	for _, name := range enabled {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered", name)
		}
		running, err := construct(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		group.Go(func() error { return running.Run(workers, ctx) })
	}
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	log.Info("controllers started")
	return group.Wait()
}

// contextOptions are cert-manager's defaults (its ControllerConfiguration v1alpha1)
// for everything the enabled controllers read.
func contextOptions(kubeconfig string) controller.ContextOptions {
	return controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: "kube-system"},
		CertificateOptions: controller.CertificateOptions{
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	}
}
