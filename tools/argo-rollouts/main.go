// Argo Rollouts' controller, started from the library packages of
// github.com/argoproj/argo-rollouts the way its own cmd/rollouts-controller
// does, with what a test harness needs and nothing more: one replica, no leader
// election, a kubeconfig, optionally one namespace, and metrics/healthz ports of
// the caller's choosing (the upstream defaults, 8090 and 8080, would clash with
// whatever else runs on the host). Traffic routers (Istio, SMI, ingresses) are
// wired the same way upstream wires them, since NewManager requires them; with
// none installed the controller only manages ReplicaSets, which is what the
// real-node test proves (test/node/argo-rollouts.test.ts).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	smiclientset "github.com/servicemeshinterface/smi-sdk-go/pkg/gen/client/split/clientset/versioned"
	log "github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/argoproj/argo-rollouts/controller"
	"github.com/argoproj/argo-rollouts/controller/metrics"
	jobprovider "github.com/argoproj/argo-rollouts/metricproviders/job"
	clientset "github.com/argoproj/argo-rollouts/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-rollouts/pkg/signals"
	controllerutil "github.com/argoproj/argo-rollouts/utils/controller"
	"github.com/argoproj/argo-rollouts/utils/defaults"
	ingressutil "github.com/argoproj/argo-rollouts/utils/ingress"
	istioutil "github.com/argoproj/argo-rollouts/utils/istio"
	logutil "github.com/argoproj/argo-rollouts/utils/log"
	"github.com/argoproj/argo-rollouts/utils/record"
	"github.com/argoproj/argo-rollouts/utils/tolerantinformer"
)

// Version is set at build time (tools/build-argo-rollouts.sh) to the module version built.
var Version = "unknown"

type options struct {
	kubeconfig  string
	namespace   string
	metricsPort int
	healthzPort int
	resync      time.Duration
	threads     int
}

func main() {
	var o options
	printVersion := flag.Bool("version", false, "print the Argo Rollouts version and exit")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to run against (required)")
	flag.StringVar(&o.namespace, "namespace", "", "manage Rollouts of this namespace only (default: all namespaces)")
	flag.IntVar(&o.metricsPort, "metrics-port", controller.DefaultMetricsPort, "port of the metrics endpoint (all interfaces, as upstream)")
	flag.IntVar(&o.healthzPort, "healthz-port", controller.DefaultHealthzPort, "port of the healthz endpoint (all interfaces, as upstream)")
	flag.DurationVar(&o.resync, "resync", controller.DefaultRolloutResyncPeriod*time.Second, "informers' resync period")
	flag.IntVar(&o.threads, "threads", 2, "workers per controller")
	flag.Parse()
	if *printVersion {
		fmt.Printf("argo-rollouts-controller %s\n", Version)
		return
	}
	if o.kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "argo-rollouts-controller: --kubeconfig is required")
		os.Exit(2)
	}
	logger := log.New()
	logutil.SetKLogLogger(logger)
	log.WithField("version", Version).Info("Argo Rollouts starting")
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig %s: %v", o.kubeconfig, err)
	}
	manager, err := newManager(config, o)
	if err != nil {
		log.Fatal(err)
	}
	electOpts := controller.NewLeaderElectionOptions()
	electOpts.LeaderElect = false
	ctx := signals.SetupSignalHandlerContext()
	t := o.threads
	if err := manager.Run(ctx, t, t, t, t, t, electOpts); err != nil {
		log.Fatalf("controller: %v", err)
	}
}

// newManager builds the clients and informer factories NewManager takes, as upstream's main does.
func newManager(config *rest.Config, o options) (*controller.Manager, error) {
	namespaced := o.namespace != ""
	namespace := metav1.NamespaceAll
	if namespaced {
		namespace = o.namespace
	}
	kubeClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	argoprojClient, err := clientset.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	dynamicClient, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	discoveryClient, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	smiClient, err := smiclientset.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	kubeInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, o.resync, kubeinformers.WithNamespace(namespace))
	// Rollouts without the instance-id label, as upstream's default (no --instance-id).
	instanceID := controllerutil.InstanceIDRequirement("")
	tweak := func(options *metav1.ListOptions) { options.LabelSelector = instanceID.String() }
	jobInformers := kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, o.resync,
		kubeinformers.WithNamespace(namespace),
		kubeinformers.WithTweakListOptions(func(options *metav1.ListOptions) {
			options.LabelSelector = jobprovider.AnalysisRunUIDLabelKey
		}))
	dynamicInformers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient, o.resync, namespace, tweak)
	// ClusterAnalysisTemplates are cluster-scoped whatever the namespace.
	clusterDynamicInformers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient, o.resync, metav1.NamespaceAll, tweak)
	istioInformers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient, o.resync, namespace, nil)
	notificationInformers := func(kind, name string) kubeinformers.SharedInformerFactory {
		return kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, o.resync,
			kubeinformers.WithNamespace(notificationNamespace(namespace)),
			kubeinformers.WithTweakListOptions(func(options *metav1.ListOptions) {
				options.Kind = kind
				options.FieldSelector = "metadata.name=" + name
			}))
	}
	mode, err := ingressutil.DetermineIngressMode("", kubeClient.DiscoveryClient)
	if err != nil {
		return nil, err
	}
	ingressWrapper, err := ingressutil.NewIngressWrapper(mode, kubeClient, kubeInformers)
	if err != nil {
		return nil, err
	}
	return controller.NewManager(
		namespace, kubeClient, argoprojClient, dynamicClient, smiClient, discoveryClient,
		kubeInformers.Apps().V1().ReplicaSets(),
		kubeInformers.Core().V1().Services(),
		ingressWrapper,
		jobInformers.Batch().V1().Jobs(),
		tolerantinformer.NewTolerantRolloutInformer(dynamicInformers),
		tolerantinformer.NewTolerantExperimentInformer(dynamicInformers),
		tolerantinformer.NewTolerantAnalysisRunInformer(dynamicInformers),
		tolerantinformer.NewTolerantAnalysisTemplateInformer(dynamicInformers),
		tolerantinformer.NewTolerantClusterAnalysisTemplateInformer(clusterDynamicInformers),
		dynamicClient,
		istioInformers.ForResource(istioutil.GetIstioVirtualServiceGVR()).Informer(),
		istioInformers.ForResource(istioutil.GetIstioDestinationRuleGVR()).Informer(),
		notificationInformers("ConfigMap", record.NotificationConfigMap),
		notificationInformers("Secret", record.NotificationSecret),
		o.resync,
		"",
		o.metricsPort,
		o.healthzPort,
		&metrics.K8sRequestsCountProvider{},
		[]string{"nginx"},
		[]string{"alb"},
		dynamicInformers,
		clusterDynamicInformers,
		istioInformers,
		namespaced,
		kubeInformers,
		jobInformers,
	), nil
}

// notificationNamespace is where the controller reads its notification ConfigMap and Secret:
// the managed namespace when there is one (nothing here configures notifications), else upstream's
// default ($POD_NAMESPACE, else "argo-rollouts").
func notificationNamespace(namespace string) string {
	if namespace != metav1.NamespaceAll {
		return namespace
	}
	return defaults.Namespace()
}
