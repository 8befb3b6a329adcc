// Command etcd is the etcd v3.6.13 server, built from Go modules so that the
// local test control plane needs no binary download.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
