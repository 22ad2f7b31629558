package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// StoreSize is a store that can say how many bytes it takes.
type StoreSize interface {
	// StoreBytes returns the bytes the store's tables and indexes take.
	StoreBytes(ctx context.Context) (int64, error)
}

var storeBytesDesc = prometheus.NewDesc("webhooks_store_bytes",
	"Bytes the store's tables and indexes take: SQLite's pages in use (free pages not counted), or the sum of pg_total_relation_size over the tables of the store's PostgreSQL schema. The same from every process.", nil, nil)

// sizeCollector reads the store's size at each scrape: one query of the
// catalog, not of the tables.
type sizeCollector struct{ store StoreSize }

func (c *sizeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- storeBytesDesc }

func (c *sizeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := c.store.StoreBytes(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(storeBytesDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(storeBytesDesc, prometheus.GaugeValue, float64(n))
}
