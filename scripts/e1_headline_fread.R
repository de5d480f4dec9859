# Times data.table::fread on one CSV in this (fresh) process; used by scripts/e1_headline.py.
#
#   Rscript scripts/e1_headline_fread.R PATH THREADS WARMUP ITERATIONS MODE
#
# MODE: "default"   fread(path, sep = ",") as the R worker calls it (datetimes parsed to POSIXct)
#       "chr_dates" the two datetime columns kept as character (fread before 1.14's native timestamps)
# Prints one JSON line: wall and CPU seconds of every read (warm-ups first) and the threads fread reported.
args <- commandArgs(trailingOnly = TRUE)
path <- args[[1L]]
threads <- as.integer(args[[2L]])
warmup <- as.integer(args[[3L]])
iterations <- as.integer(args[[4L]])
mode <- args[[5L]]

suppressPackageStartupMessages(library(data.table))
setDTthreads(threads = threads)
read <- if (mode == "chr_dates") {
  function() fread(path, sep = ",", colClasses = list(character = 2:3), showProgress = FALSE)
} else {
  function() fread(path, sep = ",", showProgress = FALSE)
}
invisible(readBin(path, raw(), file.size(path)))  # page cache warm, as the worker does

wall <- numeric(); cpu <- numeric()
for (i in seq_len(warmup + iterations)) {
  invisible(gc(full = TRUE, verbose = FALSE))
  c0 <- proc.time(); t0 <- Sys.time()
  df <- read()
  t1 <- Sys.time(); c1 <- proc.time()
  wall <- c(wall, as.numeric(t1) - as.numeric(t0))
  cpu <- c(cpu, (c1[["user.self"]] - c0[["user.self"]]) + (c1[["sys.self"]] - c0[["sys.self"]]))
  stopifnot(ncol(df) == 18L)
}
fmt <- function(x) paste0("[", paste(sprintf("%.6f", x), collapse = ","), "]")
cat(sprintf('{"wall": %s, "cpu": %s, "warmup": %d, "threads_applied": %d, "rows": %d}\n',
            fmt(wall), fmt(cpu), warmup, getDTthreads(), nrow(df)))
