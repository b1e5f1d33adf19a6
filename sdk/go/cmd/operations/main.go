// Command operations prints the SDK's table of API operations as JSON:
//
//	go run ./cmd/operations
package main

import (
	"encoding/json"
	"os"

	gatepost "github.com/gatepost/gatepost-go"
)

func main() {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(gatepost.Operations); err != nil {
		os.Exit(1)
	}
}
