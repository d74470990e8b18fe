package otelenv

import (
	"strings"
	"testing"
)

func TestConfigure(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flag     bool
		env      map[string]string
		enabled  bool
		protocol string
		err      string
	}{
		{name: "off by default"},
		{name: "the flag", flag: true, enabled: true, protocol: "http/protobuf"},
		{name: "the variable", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, enabled: true, protocol: "http/protobuf"},
		{name: "grpc", flag: true, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, enabled: true, protocol: "grpc"},
		{name: "traces protocol first", flag: true, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, enabled: true, protocol: "http/protobuf"},
		{name: "disabled wins over the flag", flag: true, env: map[string]string{"OTEL_SDK_DISABLED": "TRUE"}},
		{name: "none wins over the flag", flag: true, env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}},
		{name: "an endpoint alone does not", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "json", flag: true, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: "use http/protobuf"},
		{name: "another exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "otlp only"},
		{name: "a made-up protocol", flag: true, env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, err: "not an OTLP protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Configure(tc.flag, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || s.Enabled != tc.enabled || s.Protocol != tc.protocol {
				t.Fatalf("got %+v, %v; want enabled %v, protocol %q", s, err, tc.enabled, tc.protocol)
			}
		})
	}
}
