// Package web is the runtime server of one project: the HTTP API over an
// engine.Runtime, its server-sent event stream, the dashboard (a page and
// ES modules embedded from dashboard/), the checkpoint broker that
// lets people answer checkpoint() from a browser or a shell, the runtime
// descriptor (runtime.json) that makes one process the project's live
// owner, and the client the CLI uses to forward commands to that owner.
//
// The server listens on a loopback address only. Every route but the
// dashboard's static files needs the descriptor's bearer token; the Host
// header must name a loopback address (against DNS rebinding), requests
// that change state must not come from a foreign Origin, and bodies are
// bounded. Each of those rules is one small middleware with a config
// struct, in the manner of echo's middleware package.
//
// Events are a live acceleration, not the database: a client that
// reconnects replays what it missed from the engine's event ring, and one
// that fell behind the ring gets a reset event and rebuilds its view from
// GET /api/overview and GET /api/runs/{id}. The journal stays the truth.
package web
