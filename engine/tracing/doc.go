// Package tracing exports a runtime's runs as OpenTelemetry traces: one
// trace per execution of a run, shaped like the workflow, built from the
// engine's event bus alone, so that it follows whatever path the engine
// takes to run a call.
//
// The tree of an execution is
//
//	run NAME                      the execution (links to the earlier ones)
//	├── phase TITLE               one per phase its calls and phase() name
//	│   ├── invoke_agent LABEL    one per agent call, live or replayed
//	│   │   └── retry             one per retry, as long as its backoff
//	│   └── checkpoint            one per question, as long as it waited
//	└── invoke_agent LABEL        a call outside any phase
//
// with the agent's tool calls as events of its call span. The engine names
// the execution's trace and each call's span (engine.TraceContext) before
// anything runs, journals them, and hands every agent process the
// TRACEPARENT of its call, so that a CLI that emits OpenTelemetry itself
// joins the tree; this package gives the spans those same ids.
//
// Agent call spans follow the OpenTelemetry semantic conventions for
// generative AI at the version the semconv import pins (v1.40.0):
// gen_ai.operation.name "invoke_agent", gen_ai.agent.name, the request and
// response models, the provider and token usage. What the conventions do
// not cover is under dynworkflow.*. Prompts, answers and tool arguments
// are never exported: they are the user's code and data.
//
// Tracing is configured by the standard OTEL_* environment variables
// (internal/otelenv) and is off unless asked for; off, the engine does
// nothing more than without this package.
package tracing
