// Command collectordev runs a real OpenTelemetry Collector for dynworkflow's
// tests: the collector's own OTLP receiver (gRPC and HTTP) feeding the
// contrib file exporter, which writes every span it receives as OTLP JSON
// lines, so that a test can read back exactly what a run exported.
//
// It is the program the collector's builder would generate for these two
// components, kept in its own Go module so that the product's go.mod never
// pulls the collector in; the tests look for it in a cache outside the
// repository, where `go run ./internal/collectortest/prebuild` puts it.
//
// It takes one argument, the collector configuration as YAML (see
// collectortest.Start), and serves until its stdin is closed or it receives
// SIGINT or SIGTERM, so a test that dies also takes its collector down.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func components() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](fileexporter.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{Receivers: receivers, Exporters: exporters, Telemetry: otelconftelemetry.NewFactory()}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: collectordev CONFIG-YAML")
		os.Exit(2)
	}
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "collectordev", Description: "dynworkflow's test collector", Version: "0.161.0"},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"yaml:" + os.Args[1]},
			ProviderFactories: []confmap.ProviderFactory{yamlprovider.NewFactory()},
		}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "collectordev:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	go func() {
		<-ctx.Done()
		col.Shutdown()
	}()
	if err := col.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "collectordev:", err)
		os.Exit(1)
	}
}
