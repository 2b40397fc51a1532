package sfnengine_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/transferflow/orchestrator/localaws/sfnengine"
	"github.com/transferflow/orchestrator/localaws/sfnengine/instantaws"
)

// heapInuse returns the heap in use after a full collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// memoryStores are the stores whose memory per closed execution is measured.
var memoryStores = []struct {
	name  string
	store func(tb testing.TB) sfnengine.Store
	bound float64 // bytes per closed transfer execution TestClosedExecutionsLeaveMemory allows
}{
	{name: "memory", store: func(testing.TB) sfnengine.Store { return nil }, bound: 16 << 10},
	{name: "files", store: func(tb testing.TB) sfnengine.Store {
		return fileStore(tb, tb.TempDir())
	}, bound: 2 << 10},
}

// retainedPerExecution runs transfer executions one after the other (instant Lambda and DynamoDB integrations) for
// as long as loop says, and returns the heap the engine keeps per closed execution (HeapInuse growth / count).
func retainedPerExecution(tb testing.TB, store sfnengine.Store, loop func() bool) float64 {
	_, def := transferDefinition(tb)
	ctx := context.Background()
	eng := sfnengine.New(sfnengine.Options{Lambda: instantaws.Lambda{}, DynamoDB: instantaws.DynamoDB{}, EventBridge: instantaws.EventBridge{}, Store: store})
	defer eng.Close()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "bench", Definition: def, RoleArn: testRoleArn})
	if err != nil {
		tb.Fatal(err)
	}
	before := heapInuse()
	n := 0
	for loop() {
		n++
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Input: transferInput})
		if err != nil {
			tb.Fatal(err)
		}
		if rec, err = eng.Wait(ctx, rec.Arn); err != nil || rec.Status != sfnengine.StatusSucceeded {
			tb.Fatalf("execution ended %v: %v", rec, err)
		}
	}
	grown := float64(heapInuse()) - float64(before)
	runtime.KeepAlive(eng)
	return grown / float64(n)
}

// BenchmarkRetainedMemory reports the heap the engine keeps per closed transfer execution, with the MemoryStore and
// with a FileStore. Run it with a fixed count, for example -benchtime=5000x, so the figure is not dominated by noise.
func BenchmarkRetainedMemory(b *testing.B) {
	for _, tt := range memoryStores {
		b.Run(tt.name, func(b *testing.B) {
			per := retainedPerExecution(b, tt.store(b), b.Loop)
			b.ReportMetric(per, "heapB/execution")
		})
	}
}

// TestClosedExecutionsLeaveMemory runs 500 transfer executions and bounds the heap kept for each closed one: with
// a FileStore a summary (measured: about 300 bytes), with the MemoryStore the history as JSON lines (about 10 KB).
// Both kept the decoded history before, about 25 KB.
func TestClosedExecutionsLeaveMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1,000 executions")
	}
	for _, tt := range memoryStores {
		t.Run(tt.name, func(t *testing.T) {
			i := 0
			per := retainedPerExecution(t, tt.store(t), func() bool { i++; return i <= 500 })
			t.Logf("%.0f bytes per closed execution", per)
			if per > tt.bound {
				t.Errorf("%.0f bytes per closed execution, want at most %.0f", per, tt.bound)
			}
		})
	}
}

// BenchmarkRunningMemory starts b.N transfer executions whose first Lambda call blocks, and reports the memory each
// running execution holds while they all wait: heap, and goroutine stacks (the execution's, its timeout timer's and
// the blocked task's).
func BenchmarkRunningMemory(b *testing.B) {
	_, def := transferDefinition(b)
	release := make(chan struct{})
	started := make(chan struct{}, 1024)
	invoke := invokerFunc(func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		select {
		case <-release: // the calls after the first one
			return instantaws.LegAnswer, nil
		default:
		}
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return instantaws.LegAnswer, nil
	})
	ctx := context.Background()
	eng := sfnengine.New(sfnengine.Options{Lambda: invoke, DynamoDB: instantaws.DynamoDB{}, EventBridge: instantaws.EventBridge{}})
	defer eng.Close()
	sm, err := eng.CreateStateMachine(ctx, sfnengine.CreateInput{Name: "bench", Definition: def, RoleArn: testRoleArn})
	if err != nil {
		b.Fatal(err)
	}
	heap0, stack0 := inUse()
	var arns []string
	for b.Loop() {
		rec, err := eng.StartExecution(ctx, sfnengine.StartInput{StateMachineArn: sm.Arn, Input: transferInput})
		if err != nil {
			b.Fatal(err)
		}
		<-started
		arns = append(arns, rec.Arn)
	}
	heap, stack := inUse()
	b.ReportMetric((float64(heap)-float64(heap0))/float64(b.N), "heapB/running")
	b.ReportMetric((float64(stack)-float64(stack0))/float64(b.N), "stackB/running")
	close(release)
	for _, arn := range arns {
		if _, err := eng.Wait(ctx, arn); err != nil {
			b.Fatal(err)
		}
	}
}

// inUse returns the heap and the goroutine stacks in use after a full collection.
func inUse() (heap, stack uint64) {
	heapInuse()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, ms.StackInuse
}
