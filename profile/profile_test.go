package profile

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestCommTaskSize: a big trace holds hundreds of thousands of tasks; docs/performance.md's
// memory figures count 56 bytes each on 64-bit hosts (labels shared, not copied).
func TestCommTaskSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("32-bit host")
	}
	assert.Equal(t, uintptr(56), unsafe.Sizeof(CommTask{}))
}

// TestTaskLabelSet: equal labels get one shared copy, different ones their own.
func TestTaskLabelSet(t *testing.T) {
	var s TaskLabelSet
	a := s.Of(TaskLabels{Name: "Memcpy", TransportType: "SDMA", LinkType: "HCCS", GroupRow: "g"})
	b := s.Of(TaskLabels{Name: "Memcpy", TransportType: "SDMA", LinkType: "HCCS", GroupRow: "g"})
	c := s.Of(TaskLabels{Name: "Memcpy", TransportType: "RDMA", LinkType: "HCCS", GroupRow: "g"})
	assert.Same(t, a, b)
	assert.NotSame(t, a, c)
	assert.Equal(t, "RDMA", c.TransportType)
	task := CommTask{TaskLabels: a}
	assert.Equal(t, "Memcpy", task.Name, "the labels read as the task's own fields")
}
