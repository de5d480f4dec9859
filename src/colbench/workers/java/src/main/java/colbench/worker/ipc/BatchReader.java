package colbench.worker.ipc;

import java.io.IOException;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Reads the record batches of one Arrow file, one at a time, into the same root. */
interface BatchReader extends AutoCloseable {
  /** Load the next batch into {@link #root()}; false at the end of the file. */
  boolean loadNextBatch() throws IOException;

  VectorSchemaRoot root() throws IOException;

  @Override
  void close() throws IOException;
}
