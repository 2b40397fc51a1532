package sfnlocal_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/transferflow/orchestrator/internal/sfnlocal"
)

// heapInuse returns the heap in use after a full collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkRetainedMemory runs b.N transfer executions (instant Lambda and DynamoDB integrations) and reports the
// heap the engine keeps per finished execution (HeapInuse growth / N), in memory and with a FileStore. Run it with
// a fixed count, for example -benchtime=5000x, so the figure is not dominated by noise.
func BenchmarkRetainedMemory(b *testing.B) {
	tests := []struct {
		name  string
		store func(b *testing.B) sfnlocal.Store
	}{
		{name: "memory", store: func(*testing.B) sfnlocal.Store { return nil }},
		{name: "files", store: func(b *testing.B) sfnlocal.Store {
			s, err := sfnlocal.NewFileStore(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			_, def := transferDefinition(b)
			invoke := invokerFunc(func(context.Context, string, []byte) ([]byte, error) { return []byte(`{"ok":true}`), nil })
			ctx := context.Background()
			eng := sfnlocal.New(sfnlocal.Options{Lambda: invoke, DynamoDB: instantDynamo{}, Store: tt.store(b)})
			defer eng.Close()
			sm, err := eng.CreateStateMachine(ctx, sfnlocal.CreateInput{Name: "bench", Definition: def, RoleArn: testRoleArn})
			if err != nil {
				b.Fatal(err)
			}
			before := heapInuse()
			for b.Loop() {
				rec, err := eng.StartExecution(ctx, sfnlocal.StartInput{StateMachineArn: sm.Arn, Input: transferInput})
				if err != nil {
					b.Fatal(err)
				}
				if rec, err = eng.Wait(ctx, rec.Arn); err != nil || rec.Status != sfnlocal.StatusSucceeded {
					b.Fatalf("execution ended %v: %v", rec, err)
				}
			}
			grown := float64(heapInuse()) - float64(before)
			b.ReportMetric(grown/float64(b.N), "heapB/execution")
			runtime.KeepAlive(eng)
		})
	}
}

// BenchmarkRunningMemory starts b.N transfer executions whose first Lambda call blocks, and reports the memory each
// running execution holds (heap and goroutine stacks, the blocked task's included) while they all wait.
func BenchmarkRunningMemory(b *testing.B) {
	_, def := transferDefinition(b)
	release := make(chan struct{})
	started := make(chan struct{}, 1024)
	invoke := invokerFunc(func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return []byte(`{"ok":true}`), nil
	})
	ctx := context.Background()
	eng := sfnlocal.New(sfnlocal.Options{Lambda: invoke, DynamoDB: instantDynamo{}})
	defer eng.Close()
	sm, err := eng.CreateStateMachine(ctx, sfnlocal.CreateInput{Name: "bench", Definition: def, RoleArn: testRoleArn})
	if err != nil {
		b.Fatal(err)
	}
	before := inUse()
	var arns []string
	for b.Loop() {
		rec, err := eng.StartExecution(ctx, sfnlocal.StartInput{StateMachineArn: sm.Arn, Input: transferInput})
		if err != nil {
			b.Fatal(err)
		}
		<-started
		arns = append(arns, rec.Arn)
	}
	grown := float64(inUse()) - float64(before)
	b.ReportMetric(grown/float64(b.N), "B/running")
	close(release)
	for _, arn := range arns {
		if _, err := eng.Wait(ctx, arn); err != nil {
			b.Fatal(err)
		}
	}
}

// inUse returns the heap and stack memory in use after a full collection.
func inUse() uint64 {
	heapInuse()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}
