// Package promtext reads samples from a Prometheus text exposition, such
// as an operator's /metrics endpoint: what the suites and the benchmark
// observe of the operator from outside.
package promtext

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape: every metric family by name.
type Metrics map[string]familySamples

type familySamples []sample

type sample struct {
	labels map[string]string
	value  float64
}

// Parse reads a text exposition.
func Parse(r io.Reader) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	m := Metrics{}
	for name, f := range families {
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			// One of these is set, by the family's type.
			v := s.GetCounter().GetValue() + s.GetGauge().GetValue() + s.GetUntyped().GetValue()
			m[name] = append(m[name], sample{labels, v})
		}
	}
	return m, nil
}

// client bounds every scrape; tlsClient is it for an endpoint with a
// self-signed certificate.
var (
	client    = &http.Client{Timeout: 5 * time.Second}
	tlsClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator's own self-signed certificate, on the host
	}}
)

// Scrape reads url (http://host:port/metrics).
func Scrape(ctx context.Context, url string) (Metrics, error) {
	return ScrapeWithToken(ctx, url, "")
}

// ScrapeWithToken reads url as a Prometheus in the cluster scrapes an
// endpoint that the API server guards: with a bearer token (of an account
// allowed to get /metrics) and, over https, without checking the
// certificate, which the operator makes itself (kubebuilder's
// ServiceMonitor says insecureSkipVerify too). An empty token sends none.
func ScrapeWithToken(ctx context.Context, url, token string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := client
	if strings.HasPrefix(url, "https://") {
		c = tlsClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return Parse(resp.Body)
}

// Sum adds the samples of family (a counter, gauge or untyped metric) for
// which match is true; nil matches every sample. A family that is not
// exported is an error: a typo must not read as zero.
func (m Metrics) Sum(family string, match func(labels map[string]string) bool) (float64, error) {
	f, ok := m[family]
	if !ok {
		return 0, fmt.Errorf("%s not exported", family)
	}
	var total float64
	for _, s := range f {
		if match == nil || match(s.labels) {
			total += s.value
		}
	}
	return total, nil
}

// SumBy adds the samples of family by the values of the given labels,
// joined with spaces: SumBy("rest_client_requests_total", "method",
// "code") gives {"POST 201": 12, "GET 200": 40, ...}.
func (m Metrics) SumBy(family string, labels ...string) (map[string]float64, error) {
	f, ok := m[family]
	if !ok {
		return nil, fmt.Errorf("%s not exported", family)
	}
	out := map[string]float64{}
	for _, s := range f {
		key := make([]string, len(labels))
		for i, l := range labels {
			key[i] = s.labels[l]
		}
		out[strings.Join(key, " ")] += s.value
	}
	return out, nil
}

// Write matches the samples of rest_client_requests_total whose method
// writes: POST, PUT, PATCH and DELETE.
func Write(l map[string]string) bool {
	m := l["method"]
	return m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE"
}

// Label returns a match for samples whose label name has value.
func Label(name, value string) func(map[string]string) bool {
	return func(l map[string]string) bool { return l[name] == value }
}
