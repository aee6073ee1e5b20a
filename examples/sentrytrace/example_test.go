package sentrytrace_test

import (
	"context"
	"fmt"

	"github.com/getsentry/sentry-go"
	"github.com/laraworker/laraworker/examples/sentrytrace"
	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/payload"
)

// A job dispatched from a Laravel request that Sentry traces: the handler
// runs in a transaction of the request's trace, child of the span that
// dispatched it.
func ExampleTraced() {
	_ = sentry.Init(sentry.ClientOptions{EnableTracing: true, TracesSampleRate: 1}) // set Dsn to send
	// A payload as sentry-laravel's createPayloadUsing hook writes it.
	p, err := payload.Parse([]byte(`{"uuid":"0b7c0b1e-53f4-4a5f-8d3c-5b2f1f7d9a10","displayName":"App\\Jobs\\SendInvoice",` +
		`"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\SendInvoice","command":"O:20:\"App\\Jobs\\SendInvoice\":0:{}"},` +
		`"sentry_baggage_data":"sentry-trace_id=771a43a4192642f0b136d5159a501700,sentry-sample_rate=1,sentry-sampled=true",` +
		`"sentry_trace_parent_data":"771a43a4192642f0b136d5159a501700-b4d0a6e1b3a2c1f0-1","sentry_publish_time":1796032508.5}`))
	if err != nil {
		panic(err)
	}
	job := handlers.NewJob(1, "default", 1, p, handlers.Env{})
	h := sentrytrace.Traced(handlers.HandlerFunc(func(ctx context.Context, job *handlers.Job) error {
		tx := sentry.TransactionFromContext(ctx)
		fmt.Println("transaction", tx.Name, tx.Op)
		fmt.Println("trace", tx.TraceID, "parent", tx.ParentSpanID)
		return nil
	}))
	_ = h.Handle(context.Background(), job)
	// Output:
	// transaction App\Jobs\SendInvoice queue.process
	// trace 771a43a4192642f0b136d5159a501700 parent b4d0a6e1b3a2c1f0
}
