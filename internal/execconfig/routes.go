package execconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/engine/cost"
	"github.com/dynworkflow/dynworkflow/internal/trust"
)

// Model routing and prices are configuration too, in files of their own
// beside executors.json, read here so that every configuration file goes
// through one loader:
//
//   - routes.json, the project's (.dynworkflow/routes.json) and the user's
//     (dynworkflow/routes.json under the config directory):
//     {"routes": ["scan *=haiku", {"phase": "Verify", "model": "sonnet", "effort": "low"}]}
//     A route names a model, effort or executor for calls by label pattern
//     or phase (see callpolicy.Route). It runs no program and sends nothing
//     anywhere, so a project's routes are read without the approval a
//     project file that names programs needs; a route can make a run
//     dearer, which the dollar cap still bounds, since it prices the model
//     a route resolves to.
//   - prices.json, the user's only (dynworkflow/prices.json under the
//     config directory), laid over the built-in price table (see
//     cost.Table for its format). A project does not set prices: a
//     repository that made a model look free would defeat --max-cost.

// RoutesFile is the project's routes file, relative to the project.
const RoutesFile = ".dynworkflow/routes.json"

// UserConfigFile is the user's configuration file called name: under
// $XDG_CONFIG_HOME, else ~/.config; "" when neither can be found.
func UserConfigFile(name string) string {
	dir := trust.ConfigDir()
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

// routesFile is the format of a routes file.
type routesFile struct {
	Routes []json.RawMessage `json:"routes"`
}

// LoadRoutes reads the project's routes, then the user's (userFile, ""
// for none), in the order a call is matched against them: the first that
// matches wins. Each route says which file it came from.
func LoadRoutes(project, userFile string) ([]callpolicy.Route, error) {
	var out []callpolicy.Route
	for _, f := range []struct{ path, source string }{
		{filepath.Join(project, RoutesFile), SourceProject},
		{userFile, SourceUser},
	} {
		if f.path == "" {
			continue
		}
		routes, err := readRoutes(f.path, f.source)
		if err != nil {
			return nil, err
		}
		out = append(out, routes...)
	}
	return out, nil
}

func readRoutes(path, source string) ([]callpolicy.Route, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the routes: %w", err)
	}
	var f routesFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		line, col := lineCol(data, dec.InputOffset())
		return nil, fmt.Errorf("%s:%d:%d: %v; the file holds {\"routes\": [\"LABEL PATTERN=MODEL\", {\"phase\": \"TITLE\", \"model\": \"M\"}, ...]}",
			path, line, col, err)
	}
	var out []callpolicy.Route
	for _, raw := range f.Routes {
		r, err := callpolicy.ParseRouteJSON(raw)
		if err != nil {
			line := 1
			if i := bytes.Index(data, bytes.TrimSpace(raw)); i >= 0 {
				line, _ = lineCol(data, int64(i))
			}
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		r.Source = source
		out = append(out, r)
	}
	return out, nil
}

// LoadPrices is the built-in price table with the user's prices file
// (userFile, "" for none) laid over it.
func LoadPrices(userFile string) (*cost.Table, error) {
	t := cost.Builtin()
	if userFile == "" {
		return t, nil
	}
	data, err := os.ReadFile(userFile)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the prices: %w", err)
	}
	var over cost.Table
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&over); err != nil {
		line, col := lineCol(data, dec.InputOffset())
		return nil, fmt.Errorf("%s:%d:%d: %v; the file holds {\"models\": {\"ID\": {\"input\", \"cachedInput\", \"output\"}}, \"aliases\", \"executorModels\", \"defaultTokens\"}, dollars per million tokens",
			userFile, line, col, err)
	}
	if err := over.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", userFile, err)
	}
	t.Merge(&over, userFile)
	return t, nil
}
