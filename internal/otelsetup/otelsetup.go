// Package otelsetup sets up OpenTelemetry's Go SDK for the CLI from the
// standard environment variables (the OTel specification's
// "Environment Variable Specification"), as PHP's SDK reads the same ones
// beside it: OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER,
// OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _PROTOCOL (http/protobuf, grpc),
// _HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE, _INSECURE,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG],
// OTEL_PROPAGATORS and OTEL_BSP_*.
//
// Tracing is on only when asked for: an OTLP endpoint is set, or
// OTEL_TRACES_EXPORTER=otlp. Otherwise FromEnv returns a Setup with no
// provider and nothing runs. A value the SDK would ignore with a
// message on stderr (an unknown sampler or protocol) is a start error
// here, naming the variable; a header's value (an API key) is never
// printed.
package otelsetup

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// DefaultServiceName is service.name when OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES name none.
const DefaultServiceName = "laraworker"

// Setup is the SDK as the environment configured it.
type Setup struct {
	// Provider traces; nil when tracing is off.
	Provider trace.TracerProvider
	// Protocol and Endpoint say where spans go (the endpoint without
	// credentials or query), for the start log line; "" when off.
	Protocol, Endpoint string
	sdk                *sdktrace.TracerProvider
}

// Enabled reports whether spans are exported.
func (s *Setup) Enabled() bool { return s != nil && s.sdk != nil }

// Shutdown exports the spans still buffered and stops the exporter,
// within ctx's deadline. A no-op when tracing is off.
func (s *Setup) Shutdown(ctx context.Context) error {
	if !s.Enabled() {
		return nil
	}
	return s.sdk.Shutdown(ctx)
}

// FromEnv reads the environment and, when tracing is asked for, builds
// the tracer provider and makes it, and the propagators of
// OTEL_PROPAGATORS, OpenTelemetry's global ones (so a handler's own
// spans, otel.Tracer(...), and its instrumented outgoing calls join the
// job's trace). errorf receives export errors (the collector is down).
func FromEnv(ctx context.Context, errorf func(error)) (*Setup, error) {
	on, err := wanted()
	if err != nil || !on {
		return &Setup{}, err
	}
	protocol, err := protocolFromEnv()
	if err != nil {
		return nil, err
	}
	endpoint, err := checkEndpoint(protocol)
	if err != nil {
		return nil, err
	}
	if err := checkHeaders(); err != nil {
		return nil, err
	}
	sampler, err := samplerFromEnv()
	if err != nil {
		return nil, err
	}
	prop, err := propagatorsFromEnv()
	if err != nil {
		return nil, err
	}
	res, err := resourceFromEnv(ctx)
	if err != nil {
		return nil, err
	}
	exp, err := newExporter(ctx, protocol)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry: the %s exporter: %w", protocol, err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res), sdktrace.WithSampler(sampler))
	otel.SetTracerProvider(sdk)
	otel.SetTextMapPropagator(prop)
	if errorf != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(errorf))
	}
	return &Setup{Provider: sdk, sdk: sdk, Protocol: protocol, Endpoint: endpoint}, nil
}

// wanted: OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none switch it
// off; otlp switches it on; unset, an OTLP endpoint does.
func wanted() (bool, error) {
	switch v := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED"))); v {
	case "true":
		return false, nil
	case "", "false":
	default:
		return false, fmt.Errorf("OTEL_SDK_DISABLED=%q: want true or false", v)
	}
	exporters := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	if exporters == "" {
		return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	}
	on := false
	for _, e := range strings.Split(exporters, ",") {
		switch e = strings.ToLower(strings.TrimSpace(e)); e {
		case "otlp":
			on = true
		case "none":
		default:
			return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: laraworker exports traces with otlp (or none)", e)
		}
	}
	return on, nil
}

// The OTLP protocols Go's exporters speak.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

func protocolFromEnv() (string, error) {
	name, v := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if v == "" {
		name, v = "OTEL_EXPORTER_OTLP_PROTOCOL", os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch v = strings.TrimSpace(v); v {
	case "":
		return ProtocolHTTP, nil
	case ProtocolHTTP, ProtocolGRPC:
		return v, nil
	}
	return "", fmt.Errorf("%s=%q: want http/protobuf or grpc (Go's OTLP exporters have no http/json)", name, v)
}

// checkEndpoint checks the endpoint the exporter will read, and returns
// it as it may be logged: without credentials, query or fragment.
func checkEndpoint(protocol string) (string, error) {
	name, v := "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if v == "" {
		name, v = "OTEL_EXPORTER_OTLP_ENDPOINT", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if v == "" {
		if protocol == ProtocolGRPC {
			return "localhost:4317 (the default)", nil
		}
		return "http://localhost:4318 (the default)", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: want a URL such as http://collector:4318 (http or https, with a host)", name)
	}
	return u.Scheme + "://" + u.Host + u.Path, nil
}

// checkHeaders refuses headers the exporter would drop silently; the
// values (API keys) are never printed.
func checkHeaders() error {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			continue
		}
		for i, item := range strings.Split(v, ",") {
			key, val, ok := strings.Cut(item, "=")
			if !ok || strings.TrimSpace(key) == "" {
				return fmt.Errorf("%s: entry %d is not key=value (W3C baggage format, values URL-encoded)", name, i+1)
			}
			if _, err := url.PathUnescape(val); err != nil {
				return fmt.Errorf("%s: the value of %q is not URL-encoded", name, strings.TrimSpace(key))
			}
		}
	}
	return nil
}

// samplerFromEnv is OTEL_TRACES_SAMPLER and _ARG as the SDK reads them,
// but an error instead of the SDK's silent fallback. Default:
// parentbased_always_on (a trace PHP sampled is recorded, one it dropped
// is not).
func samplerFromEnv() (sdktrace.Sampler, error) {
	name := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(os.Getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() (sdktrace.Sampler, error) {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1), nil
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 0 || v > 1 {
			return nil, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a ratio from 0 to 1", arg)
		}
		return sdktrace.TraceIDRatioBased(v), nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio":
		return ratio()
	case "parentbased_traceidratio":
		s, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.ParentBased(s), nil
	}
	return nil, fmt.Errorf("OTEL_TRACES_SAMPLER=%q: want always_on, always_off, traceidratio or their parentbased_ forms", name)
}

// propagatorsFromEnv is OTEL_PROPAGATORS (default tracecontext,baggage):
// the global propagators a handler's instrumented calls use. Job
// payloads always carry W3C trace context, as PHP's do.
func propagatorsFromEnv() (propagation.TextMapPropagator, error) {
	v := strings.TrimSpace(os.Getenv("OTEL_PROPAGATORS"))
	if v == "" {
		v = "tracecontext,baggage"
	}
	var list []propagation.TextMapPropagator
	for _, name := range strings.Split(v, ",") {
		switch name = strings.ToLower(strings.TrimSpace(name)); name {
		case "tracecontext":
			list = append(list, propagation.TraceContext{})
		case "baggage":
			list = append(list, propagation.Baggage{})
		case "none":
		default:
			return nil, fmt.Errorf("OTEL_PROPAGATORS: %q is not supported by laraworker: use tracecontext, baggage or none", name)
		}
	}
	return propagation.NewCompositeTextMapPropagator(list...), nil
}

// resourceFromEnv describes the process: service.name (laraworker unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise), the SDK,
// the host and the pid. Not the command line or the environment, where
// secrets may be.
func resourceFromEnv(ctx context.Context) (*resource.Resource, error) {
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		resource.WithTelemetrySDK(), resource.WithHost(), resource.WithProcessPID(),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES or OTEL_SERVICE_NAME: %w", err)
	}
	return res, nil
}

// newExporter is the OTLP exporter of protocol; it reads the endpoint,
// headers, timeout, compression and TLS settings from the environment.
func newExporter(ctx context.Context, protocol string) (*otlptrace.Exporter, error) {
	if protocol == ProtocolGRPC {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}
