package colbench.worker.ipc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * N dedicated threads; member {@code t} always runs on thread {@code t}, so the data a member made (and first
 * touched) stays with the thread that reads it. {@link #timed} starts all members together behind a gate and
 * times from opening the gate to the end of the last member.
 */
final class ThreadTeam implements AutoCloseable {
  private final List<ExecutorService> members = new ArrayList<>();

  ThreadTeam(int size) {
    for (int t = 0; t < size; t++) {
      String name = "colbench-reader-" + t;
      members.add(Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        return thread;
      }));
    }
  }

  int size() {
    return members.size();
  }

  /** A task of member {@code t}. */
  @FunctionalInterface
  interface MemberTask<T> {
    T call(int member) throws Exception;
  }

  /** Run {@code task} on every member and wait for all (untimed work such as data generation). */
  <T> List<T> all(MemberTask<T> task) throws Exception {
    List<Future<T>> futures = new ArrayList<>();
    for (int t = 0; t < members.size(); t++) {
      int member = t;
      futures.add(members.get(t).submit(() -> task.call(member)));
    }
    return collect(futures);
  }

  /** Results of one timed run: each member's result and the wall time from the start gate to the last end. */
  record Timed<T>(List<T> results, long wallNanos) {}

  <T> Timed<T> timed(MemberTask<T> task) throws Exception {
    int n = members.size();
    CountDownLatch ready = new CountDownLatch(n);
    CountDownLatch gate = new CountDownLatch(1);
    long[] ends = new long[n];
    List<Future<T>> futures = new ArrayList<>();
    for (int t = 0; t < n; t++) {
      int member = t;
      futures.add(members.get(t).submit(() -> {
        ready.countDown();
        gate.await();
        try {
          return task.call(member);
        } finally {
          ends[member] = System.nanoTime();
        }
      }));
    }
    ready.await();
    long start = System.nanoTime();
    gate.countDown();
    List<T> results = collect(futures);
    long end = Long.MIN_VALUE;
    for (long e : ends) {
      end = Math.max(end, e);
    }
    return new Timed<>(results, end - start);
  }

  private static <T> List<T> collect(List<Future<T>> futures) throws Exception {
    List<T> results = new ArrayList<>();
    for (Future<T> future : futures) {
      try {
        results.add(future.get());
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof Exception exception) {
          throw exception;
        }
        if (cause instanceof Error error) {
          throw error;
        }
        throw e;
      }
    }
    return results;
  }

  @Override
  public void close() {
    for (ExecutorService member : members) {
      member.shutdown();
    }
    try {
      for (ExecutorService member : members) {
        member.awaitTermination(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
