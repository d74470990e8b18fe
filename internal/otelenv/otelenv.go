// Package otelenv reads the standard OpenTelemetry variables that decide
// whether and how dynworkflow exports traces. It needs nothing of the
// OpenTelemetry SDK, so that the build without the SDK (the default one,
// see cmd/dynworkflow) can tell when to hand a command to the build with
// it.
package otelenv

import (
	"fmt"
	"strings"
)

// Settings are what the command line and the environment ask for.
type Settings struct {
	// Enabled is whether runs are traced at all.
	Enabled bool
	// Protocol is the OTLP transport: "http/protobuf" or "grpc".
	Protocol string
}

// Configure reads the standard variables through getenv (os.Getenv, or a
// test's map) with flag, the command line's --trace.
//
// Tracing is on with --trace or OTEL_TRACES_EXPORTER=otlp, and off with
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, whatever the flag
// says: a variable set to turn telemetry off everywhere is obeyed. The
// OTLP exporter then reads the rest itself: OTEL_EXPORTER_OTLP_ENDPOINT
// (and _TRACES_ENDPOINT), _HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE,
// _INSECURE; the SDK reads OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_*.
func Configure(flag bool, getenv func(string) string) (Settings, error) {
	var s Settings
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return s, nil
	}
	exporters := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	switch strings.ToLower(exporters) {
	case "none":
		return s, nil
	case "":
		if !flag {
			return s, nil
		}
	case "otlp":
	default:
		return s, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: dynworkflow exports traces with otlp only; set it to otlp (or none, to turn tracing off)", exporters)
	}
	s.Enabled = true
	s.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if s.Protocol == "" {
		s.Protocol = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch s.Protocol {
	case "":
		s.Protocol = "http/protobuf" // the specification's default
	case "http/protobuf", "grpc":
	case "http/json":
		return s, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=http/json: the OpenTelemetry Go SDK does not send OTLP as JSON; use http/protobuf (port 4318) or grpc (port 4317)")
	default:
		return s, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s is not an OTLP protocol; use http/protobuf or grpc", s.Protocol)
	}
	return s, nil
}
