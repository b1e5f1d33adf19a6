// Wrapper module that builds the Dapr runtime binaries (daprd, placement,
// scheduler) from the github.com/dapr/dapr module at a pinned release.
// It has no code of its own: the `tool` lines keep every package the three
// commands need in go.sum, and build.sh runs `go build github.com/dapr/dapr/cmd/<name>`.
module gatepost/dapr/build

go 1.26.6

require github.com/dapr/dapr v1.18.3

tool (
	github.com/dapr/dapr/cmd/daprd
	github.com/dapr/dapr/cmd/placement
	github.com/dapr/dapr/cmd/scheduler
)

// The replace directives below are copied verbatim from dapr's own go.mod at
// v1.18.3. Replace directives only apply in the main module, so without them
// this module would resolve different (or broken) versions than dapr ships.

replace (
	// this is a fork which addresses a performance issues due to go routines
	dubbo.apache.org/dubbo-go/v3 => dubbo.apache.org/dubbo-go/v3 v3.0.3-0.20230118042253-4f159a2b38f3

	// this is a fork that utilises github.com/iskorotkov/avro/v2
	github.com/apache/pulsar-client-go v0.18.0 => github.com/twmb/pulsar-client-go v0.20.1-0.20260624144353-90eefc81f70a

	gopkg.in/couchbaselabs/gocbconnstr.v1 => github.com/couchbaselabs/gocbconnstr v1.0.5
)

// the following lines are necessary to update to commits with proper licenses
replace (
	github.com/chenzhuoyu/iasm => github.com/chenzhuoyu/iasm v0.9.0
	github.com/chzyer/logex => github.com/chzyer/logex v1.2.1
	github.com/gobwas/pool => github.com/gobwas/pool v0.2.1
	github.com/toolkits/concurrent => github.com/niean/gotools v0.0.0-20151221085310-ff3f51fc5c60
)
