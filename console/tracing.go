package console

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/otelsetup"
	"github.com/rs/zerolog"
)

// tracingFlushTimeout bounds the export of the spans still buffered when
// the worker stops.
const tracingFlushTimeout = 10 * time.Second

// startTracing sets up OpenTelemetry from the standard OTEL_* variables
// (docs/TRACING.md) and says what it does: where spans go, or, when
// OTEL_* variables are set but none asks for tracing, that it is off.
func startTracing(ctx context.Context, log zerolog.Logger) (*otelsetup.Setup, error) {
	setup, err := otelsetup.FromEnv(ctx, func(err error) {
		log.Warn().Err(err).Msg("OpenTelemetry: exporting spans failed")
	})
	if err != nil {
		return nil, err
	}
	switch {
	case setup.Enabled():
		log.Info().Str("protocol", setup.Protocol).Str("endpoint", setup.Endpoint).
			Msg("OpenTelemetry: tracing every job attempt (docs/TRACING.md)")
	case otelVariablesSet():
		log.Info().Msg("OpenTelemetry: off (set OTEL_EXPORTER_OTLP_ENDPOINT, or OTEL_TRACES_EXPORTER=otlp, to trace jobs)")
	}
	return setup, nil
}

// stopTracing exports what is still buffered.
func stopTracing(setup *otelsetup.Setup, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
	defer cancel()
	if err := setup.Shutdown(ctx); err != nil {
		log.Warn().Err(err).Msg("OpenTelemetry: the last spans could not be exported")
	}
}

func otelVariablesSet() bool {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") {
			return true
		}
	}
	return false
}
