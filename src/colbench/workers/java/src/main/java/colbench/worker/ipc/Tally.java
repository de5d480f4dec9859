package colbench.worker.ipc;

/**
 * What a reader consumed: rows, value bytes (counted as the post did: non-null values only, 4/8 bytes per
 * int/long, the payload of binary values) and a checksum of the values it touched. Also what the generator
 * expects a reader to see.
 *
 * <p>Checksums (wrapping 64-bit sums, so they add across batches and threads):
 * <ul>
 *   <li>int32/int64, every access but lazy: the sum of the values (int32 sign-extended)
 *   <li>binary offsets: the sum of value lengths ({@code end - start})
 *   <li>binary materialize: the sum over values of {@code length + (first byte & 0xFF)}
 *   <li>binary scan: each batch's payload (offset[0] to offset[n]) as little-endian 64-bit words, the last
 *       one zero-padded, summed
 *   <li>lazy: none
 * </ul>
 */
public final class Tally {
  long rows;
  long bytes;
  long checksum;
  long batches;
  /** The last batch's materialized objects: written, never read; it makes them escape. */
  Object sink;

  public long rows() {
    return rows;
  }

  public long bytes() {
    return bytes;
  }

  public long checksum() {
    return checksum;
  }

  public long batches() {
    return batches;
  }

  public void add(Tally other) {
    rows += other.rows;
    bytes += other.bytes;
    checksum += other.checksum;
    batches += other.batches;
  }
}
