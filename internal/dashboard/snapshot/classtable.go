package snapshot

// classTable counts rows per (queue, class) without hashing each row: a
// slice per queue indexed by class id, or a map when the product of the
// two would be too large.
type classTable struct {
	dense  [][]classCell
	sparse map[uint64]*classCell
	nc     int
}

type classCell struct {
	ClassCounts
	q    uint16
	c    uint32
	used bool
}

func newClassTable(queues, classes int) *classTable {
	t := &classTable{nc: classes}
	if queues*classes <= 1<<20 {
		t.dense = make([][]classCell, queues)
	} else {
		t.sparse = map[uint64]*classCell{}
	}
	return t
}

func (t *classTable) get(q uint16, c uint32) *ClassCounts {
	var cell *classCell
	if t.dense != nil {
		if t.dense[q] == nil {
			t.dense[q] = make([]classCell, t.nc)
		}
		cell = &t.dense[q][c]
	} else {
		k := uint64(q)<<32 | uint64(c)
		if cell = t.sparse[k]; cell == nil {
			cell = &classCell{}
			t.sparse[k] = cell
		}
	}
	if !cell.used {
		cell.used, cell.q, cell.c = true, q, c
	}
	return &cell.ClassCounts
}

func (t *classTable) all() []*classCell {
	var out []*classCell
	for _, row := range t.dense {
		for i := range row {
			if row[i].used {
				out = append(out, &row[i])
			}
		}
	}
	for _, cell := range t.sparse {
		out = append(out, cell)
	}
	return out
}
