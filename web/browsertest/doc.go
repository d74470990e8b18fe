// Package browsertest holds the dashboard's tests in a real browser: they
// drive Debian's chromium with chromedp against a real runtime server on
// 127.0.0.1 and look at the page as a person would (agents changing live,
// checkpoints answered, pause and resume, a server restart, hostile text,
// a 1,000-agent run), and save screenshots of it.
//
// They live apart from package web so that the rest of the suite does not
// pay for a browser. Without chromium on PATH (or DYNWORKFLOW_CHROMIUM) they
// skip, except under CI=true, where they fail. DYNWORKFLOW_ARTIFACTS names a
// directory to keep the screenshots in; otherwise they go to a temporary
// directory that the test log names.
package browsertest
