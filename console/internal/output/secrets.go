package output

import (
	"sync"

	"github.com/laraworker/laraworker/internal/redact"
	"github.com/urfave/cli/v2"
)

// secretsKey is where an app keeps its Redactor (cli.App.Metadata).
const secretsKey = "laraworker.secrets"

var secretsMu sync.Mutex

// Secrets is the app's Redactor: the secrets every log line and printed
// error of its commands goes without. The app's configuration adds them
// when it is read (queueconn.LoadAppConfig), the dashboard its
// credentials; a logger made before holds the same Redactor, so its later
// lines are redacted too.
func Secrets(app *cli.App) *redact.Redactor {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	if app.Metadata == nil {
		app.Metadata = map[string]any{}
	}
	r, ok := app.Metadata[secretsKey].(*redact.Redactor)
	if !ok {
		r = redact.New()
		app.Metadata[secretsKey] = r
	}
	return r
}
