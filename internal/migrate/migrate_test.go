package migrate

import (
	"context"
	"slices"
	"testing"
	"testing/fstest"
)

func TestRun(t *testing.T) {
	fsys := fstest.MapFS{
		"migration/0002_queue.sql": {Data: []byte("B")},
		"migration/0001_init.sql":  {Data: []byte("A")},
		"migration/README":         {Data: []byte("not a migration")},
	}
	var got []string
	err := Run(context.Background(), fsys, func(_ context.Context, name string, body []byte) error {
		got = append(got, name+"="+string(body))
		return nil
	})
	if want := []string{"migration/0001_init.sql=A", "migration/0002_queue.sql=B"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Run: got %v, %v; want %v in order", got, err, want)
	}
}

func TestFiles_Numbering(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"a gap":     {"migration/0001_a.sql": {}, "migration/0003_c.sql": {}},
		"a repeat":  {"migration/0001_a.sql": {}, "migration/0001_b.sql": {}},
		"no number": {"migration/init.sql": {}},
		"not 0001":  {"migration/0002_b.sql": {}},
		"3 digits":  {"migration/001_a.sql": {}},
	} {
		if names, err := Files(fsys); err == nil {
			t.Errorf("%s: got %v, want an error", name, names)
		}
	}
}
