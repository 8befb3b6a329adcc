// Package command is what the controller's and cainjector's mains share: the
// command line, cert-manager's logging, and a context that ends on SIGINT or SIGTERM.
package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// Version is stamped by ../../build-cert-manager.sh.
var Version = "unknown"

// Main parses the command line (--version, klog's flags and whatever the
// caller registered), then runs run with the --kubeconfig value until a signal.
// kubeconfig reads that value after parsing.
func Main(name string, kubeconfig func() string, run func(ctx context.Context, kubeconfig string) error) {
	showVersion := flag.Bool("version", false, "print the version and exit")
	klog.InitFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Printf("%s %s\n", name, Version)
		return
	}
	if kubeconfig() == "" {
		fmt.Fprintf(os.Stderr, "%s: --kubeconfig is required\n", name)
		os.Exit(2)
	}
	logf.InitLogs()
	defer logf.FlushLogs()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, name)
	if err := run(ctx, kubeconfig()); err != nil && !errors.Is(err, context.Canceled) {
		logf.Log.Error(err, name+" failed")
		stop()
		logf.FlushLogs()
		os.Exit(1)
	}
}
