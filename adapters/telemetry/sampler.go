package telemetry

import (
	"fmt"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// samplerFromEnv builds the sampler OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG name (the OpenTelemetry environment
// specification's values; parentbased_always_on when unset or unknown,
// unknown values reported through warn) and wraps it in LinkedSampler.
func samplerFromEnv(getenv func(string) string, warn func(string)) sdktrace.Sampler {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	ratio := func() float64 {
		arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
		if arg == "" {
			return 1
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			warn(fmt.Sprintf("OTEL_TRACES_SAMPLER_ARG=%q is not a ratio in [0, 1]; 1 is used", arg))
			return 1
		}
		return r
	}
	var base sdktrace.Sampler
	switch name {
	case "always_on":
		base = sdktrace.AlwaysSample()
	case "always_off":
		base = sdktrace.NeverSample()
	case "traceidratio":
		base = sdktrace.TraceIDRatioBased(ratio())
	case "parentbased_always_off":
		base = sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		base = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio()))
	case "", "parentbased_always_on":
		base = sdktrace.ParentBased(sdktrace.AlwaysSample())
	default:
		warn(fmt.Sprintf("OTEL_TRACES_SAMPLER=%q is not supported; parentbased_always_on is used", name))
		base = sdktrace.ParentBased(sdktrace.AlwaysSample())
	}
	return LinkedSampler(base)
}

// LinkedSampler samples a span that base would drop when one of its links
// (given at start) points at a sampled span. The writer's fluss.PutKv and
// fluss.ProduceLog spans start traces of their own (one batch carries the
// rows of many REST requests) and link the requests' fluss.write.wait spans:
// with it, such a span is recorded whenever any request whose rows it
// carries is sampled, whatever the ratio of root spans.
func LinkedSampler(base sdktrace.Sampler) sdktrace.Sampler {
	return linkedSampler{base: base}
}

type linkedSampler struct{ base sdktrace.Sampler }

func (s linkedSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	res := s.base.ShouldSample(p)
	if res.Decision == sdktrace.RecordAndSample {
		return res
	}
	for _, l := range p.Links {
		if l.SpanContext.IsSampled() {
			return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample, Tracestate: res.Tracestate}
		}
	}
	return res
}

func (s linkedSampler) Description() string {
	return "LinkedSampler{" + s.base.Description() + "}"
}
