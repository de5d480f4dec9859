# colbench R worker — worker protocol version 1 (docs/protocol.md).
#
#   Rscript worker.R case.json result.json     (colbench/workers/r/ in the colbench package)
#
# One fresh process executes one benchmark case: read the case spec, apply threads, warm the cache (or evict
# the input before every execution when cache = cold), run the warm-ups and the timed iterations, check the
# output of every iteration, write result.json atomically (temp file + rename). Nothing is reported on stdout.
#
# Benchmarks:
#   csv-read   E1 (arrowbench's read_csv): read a CSV / CSV.gz into an R data frame with
#              data.table::fread, readr::read_delim (single-threaded) or vroom::vroom(altrep = FALSE),
#              with defaults only: the delimiter (and col_names/header = FALSE for headerless files) is all that
#              is passed that affects parsing. See README.md next to this file for the details and the caveats.
#
# Exit status: 0 when a result file was written (status "ok" or "error"), 2 for a usage error or an unreadable
# case.json (one line on stderr, no result file), 3 when even the error result could not be written.

PROTOCOL <- 1L
READERS <- c("data.table", "readr", "vroom")
# `rows` sizes the synthetic input the orchestrator prepared; the worker reads whatever file it is given
CSV_PARAMS <- c("reader", "source", "compression", "output", "inference", "rows", "threads", "allocator", "cache")
REPORTED_PACKAGES <- c("data.table", "readr", "vroom", "jsonlite", "R.utils")

`%||%` <- function(a, b) if (is.null(a)) b else a

# ---------------------------------------------------------------------------------------------------------
# conditions

colbench_condition <- function(kind, message) {
  structure(class = c(paste0("colbench_", kind), "error", "condition"),
            list(message = message, call = NULL, kind = kind))
}
invalid <- function(...) stop(colbench_condition("invalid", paste0(...)))
check_failed <- function(...) stop(colbench_condition("check", paste0(...)))

# ---------------------------------------------------------------------------------------------------------
# clocks and process state

# Wall time: R has no monotonic clock in base or in Debian's r-cran-* packages (Sys.time(), proc.time() and
# bench::hires_time() all read CLOCK_REALTIME on Linux; microbenchmark, whose get_nanotime() is
# CLOCK_MONOTONIC, is not packaged in Debian). So each iteration is timed with Sys.time() (clock_gettime
# REALTIME, sub-microsecond resolution as a double) and guarded by /proc/uptime (CLOCK_BOOTTIME, monotonic,
# 10 ms resolution): if the two disagree by more than 20 ms + 1 %, the realtime clock was stepped during the
# iteration; the monotonic value is used and a warning is recorded.
now_s <- function() as.numeric(Sys.time())
uptime_s <- function() {
  v <- tryCatch(suppressWarnings(as.numeric(strsplit(readLines("/proc/uptime", n = 1L), " ", fixed = TRUE)[[1L]][1L])),
                error = function(e) NA_real_)
  if (length(v) != 1L) NA_real_ else v
}

# CPU time of this process (all threads; children excluded), 1 ms resolution (getrusage, rounded by R).
cpu_now <- function() {
  p <- proc.time()
  c(user = p[["user.self"]], sys = p[["sys.self"]])
}
gc_time_s <- function() gc.time()[[1L]]  # cumulative seconds spent in R's garbage collector

proc_status_bytes <- function(field) {
  lines <- tryCatch(readLines("/proc/self/status"), error = function(e) character())
  hit <- grep(paste0("^", field, ":"), lines, value = TRUE)
  if (length(hit) != 1L) return(NULL)
  kb <- suppressWarnings(as.numeric(sub("^[^:]+:\\s*([0-9]+)\\s*kB.*$", "\\1", hit)))
  if (is.na(kb)) NULL else kb * 1024
}

# R's heap high-water mark: gc()'s "max used" cell counts; an Ncell (cons cell) is 56 bytes on 64-bit
# builds (28 on 32-bit), a Vcell 8 bytes.
r_heap_max_used_bytes <- function() {
  g <- gc(verbose = FALSE)
  cells <- g[, "max used"]
  ncell_bytes <- if (.Machine$sizeof.pointer == 8L) 56 else 28
  round(cells[["Ncells"]] * ncell_bytes + cells[["Vcells"]] * 8)
}

# ---------------------------------------------------------------------------------------------------------
# page cache

warm_file <- function(path) {
  con <- file(path, "rb", raw = TRUE)  # raw = TRUE: do not transparently gunzip
  on.exit(close(con))
  repeat if (length(readBin(con, raw(), n = 8L * 1024L * 1024L)) == 0L) break
  invisible(TRUE)
}

# Per file: `sync FILE` (the kernel keeps dirty pages), then posix_fadvise(POSIX_FADV_DONTNEED) over the whole
# file through GNU dd ("iflag=nocache count=0" drops the cache of the entire file; no root needed). Residency
# is then measured with util-linux fincore when it is installed; if more than 1 % of the file is still cached
# and we are root, the global drop_caches is the fallback. Returns TRUE when the file is (believed) evicted.
evict_file <- function(path) {
  run <- function(cmd, args) {
    exe <- Sys.which(cmd)
    if (!nzchar(exe)) return(NA)
    identical(as.integer(suppressWarnings(system2(exe, args, stdout = FALSE, stderr = FALSE))), 0L)
  }
  resident <- function() {  # bytes of the file in the page cache, NA when it cannot be told
    exe <- Sys.which("fincore")
    if (!nzchar(exe)) return(NA_real_)
    out <- suppressWarnings(system2(exe, c("--bytes", "--noheadings", "--output", "RES", shQuote(path)),
                                    stdout = TRUE, stderr = FALSE))
    v <- suppressWarnings(as.numeric(trimws(out[1L])))
    if (length(v) != 1L) NA_real_ else v
  }
  limit <- 0.01 * max(file.size(path), 1)
  run("sync", shQuote(path))
  ok <- isTRUE(run("dd", c(paste0("if=", shQuote(path)), "iflag=nocache", "count=0", "status=none")))
  left <- resident()
  if (!is.na(left)) ok <- left <= limit
  if (!ok && is_root()) {
    dropped <- tryCatch({ cat("1\n", file = "/proc/sys/vm/drop_caches"); TRUE }, error = function(e) FALSE,
                        warning = function(w) FALSE)
    if (dropped) {
      left <- resident()
      ok <- is.na(left) || left <= limit
    }
  }
  ok
}
is_root <- function() identical(system2("id", "-u", stdout = TRUE, stderr = FALSE), "0")

cpu_affinity <- function() {
  lines <- tryCatch(readLines("/proc/self/status"), error = function(e) character())
  hit <- sub("^Cpus_allowed_list:\\s*", "", grep("^Cpus_allowed_list:", lines, value = TRUE))
  if (length(hit) != 1L || !nzchar(hit)) return(NULL)
  cpus <- unlist(lapply(strsplit(hit, ",", fixed = TRUE)[[1L]], function(part) {
    r <- as.integer(strsplit(part, "-", fixed = TRUE)[[1L]])
    if (length(r) == 2L) seq(r[1L], r[2L]) else r
  }))
  if (anyNA(cpus)) NULL else cpus
}

# ---------------------------------------------------------------------------------------------------------
# case validation

as_count <- function(x, what, min = 0L) {
  if (is.null(x) || length(x) != 1L || !is.numeric(x) || is.na(x) || x != round(x) || x < min)
    invalid(what, " must be an integer >= ", min, ", got ", format_value(x))
  as.integer(x)
}
as_flag <- function(x, what) {
  if (is.null(x) || length(x) != 1L || !is.logical(x) || is.na(x))
    invalid(what, " must be true or false, got ", format_value(x))
  x
}
as_string <- function(x, what) {
  if (is.null(x) || length(x) != 1L || !is.character(x) || !nzchar(x))
    invalid(what, " must be a non-empty string, got ", format_value(x))
  x
}
format_value <- function(x) {
  if (is.null(x)) return("null")
  paste(deparse(x, width.cutoff = 60L, nlines = 1L), collapse = "")
}

# Validates the csv-read case; returns a list with everything the run needs.
plan_csv_read <- function(case, warn) {
  params <- case$params %||% list()
  unknown <- setdiff(names(params), CSV_PARAMS)
  if (length(unknown))
    invalid("unknown param(s) for csv-read in the R worker: ", paste(unknown, collapse = ", "),
            " (known: ", paste(CSV_PARAMS, collapse = ", "), ")")

  reader <- as_string(params$reader, "params.reader")
  if (!reader %in% READERS)
    invalid("params.reader = '", reader, "' is not an R reader (R worker readers: ",
            paste(READERS, collapse = ", "), ")")
  source <- as_string(params$source %||% case$inputs$data$dataset, "params.source")
  compression <- as_string(params$compression %||% "none", "params.compression")
  if (!compression %in% c("none", "gzip"))
    invalid("params.compression = '", compression, "' is not supported (none, gzip)")
  output <- as_string(params$output %||% "dataframe", "params.output")
  if (output != "dataframe")
    invalid("params.output = '", output, "': R readers can only produce an R data frame (output = dataframe)")
  inference <- as_string(params$inference %||% "default", "params.inference")
  if (inference != "default")
    invalid("params.inference = '", inference, "': the R readers infer types from their defaults only")

  threads <- as_count(params$threads %||% case$threads, "params.threads", min = 1L)
  if (!is.null(case$threads) && !is.null(params$threads) && !identical(as.integer(case$threads), threads))
    invalid("threads = ", case$threads, " differs from params.threads = ", threads)
  if (reader == "readr" && threads != 1L)
    invalid("readr is benchmarked single-threaded only (as in arrowbench); threads = ", threads, " is invalid")

  cache <- as_string(params$cache %||% case$cache %||% "warm", "params.cache")
  if (!cache %in% c("warm", "cold")) invalid("cache = '", cache, "' is not warm or cold")
  if (!is.null(case$cache) && !identical(case$cache, cache))
    invalid("cache = '", case$cache, "' differs from params.cache = '", cache, "'")
  allocator <- as_string(params$allocator %||% case$allocator %||% "default", "params.allocator")

  iterations <- as_count(case$iterations %||% 1L, "iterations", min = 1L)
  warmup <- as_count(case$warmup %||% 0L, "warmup", min = 0L)

  data <- case$inputs$data
  if (is.null(data) || !is.list(data)) invalid("inputs.data is missing")
  path <- as_string(data$path, "inputs.data.path")
  is_gz <- grepl("\\.gz$", path, ignore.case = TRUE)
  if (compression == "gzip" && !is_gz)
    invalid("params.compression = gzip but inputs.data.path is not a .gz file: ", path)
  if (compression == "none" && is_gz)
    invalid("params.compression = none but inputs.data.path is a .gz file: ", path)

  delimiter <- data$delimiter
  header <- data$header
  if (is.null(delimiter) || is.null(header)) {
    fannie <- grepl("fanniemae", source, fixed = TRUE)
    delimiter <- delimiter %||% if (fannie) "|" else ","
    header <- header %||% !fannie
    warn(sprintf("inputs.data did not give delimiter/header; inferred from the source name: delimiter '%s', header %s",
                 delimiter, tolower(header)))
  }
  delimiter <- as_string(delimiter, "inputs.data.delimiter")
  if (!delimiter %in% c(",", "|", "\t", ";"))
    invalid("inputs.data.delimiter = '", delimiter, "' is not supported (',', '|', tab, ';')")
  header <- as_flag(header, "inputs.data.header")
  rows <- as_count(data$rows, "inputs.data.rows", min = 0L)
  columns <- as_count(data$columns, "inputs.data.columns", min = 1L)

  list(reader = reader, source = source, compression = compression, output = output, threads = threads,
       cache = cache, allocator = allocator, iterations = iterations, warmup = warmup, path = path,
       delimiter = delimiter, header = header, rows = rows, columns = columns)
}

# ---------------------------------------------------------------------------------------------------------
# readers (defaults only; see README.md)

load_reader <- function(plan) {
  pkg <- plan$reader
  if (!requireNamespace(pkg, quietly = TRUE))
    stop("R package '", pkg, "' is not installed (run `colbench setup r`)")
  n <- plan$threads
  if (pkg == "data.table") {
    if (plan$compression == "gzip" && !requireNamespace("R.utils", quietly = TRUE))
      stop("data.table::fread needs the R package R.utils to read .gz files (run `colbench setup r`)")
    data.table::setDTthreads(threads = n)
    applied <- list(data.table = data.table::getDTthreads())
    path <- plan$path; sep <- plan$delimiter
    read <- if (plan$header) {
      function() data.table::fread(path, sep = sep)
    } else {
      function() data.table::fread(path, sep = sep, header = FALSE)
    }
  } else if (pkg == "readr") {
    applied <- list(readr = 1L)
    path <- plan$path; delim <- plan$delimiter; col_names <- plan$header
    # num_threads = 1: readr >= 2.0 parses with vroom's multithreaded engine by default; arrowbench's readr
    # was the single-threaded readr 1.x, so it is pinned to one thread. progress/show_col_types: display only.
    read <- function() readr::read_delim(path, delim = delim, col_names = col_names, num_threads = 1L,
                                         progress = FALSE, show_col_types = FALSE)
  } else {
    applied <- list(vroom = n)
    path <- plan$path; delim <- plan$delimiter; col_names <- plan$header
    read <- function() vroom::vroom(path, delim = delim, col_names = col_names, altrep = FALSE,
                                    num_threads = n, progress = FALSE, show_col_types = FALSE)
  }
  list(read = read, applied = applied)
}

# Notes about one result that are worth a warning (computed outside the timed region, once).
describe_output <- function(plan, df) {
  notes <- character()
  if (plan$reader %in% c("readr", "vroom")) {
    probs <- tryCatch(getExportedValue(plan$reader, "problems")(df), error = function(e) NULL)
    if (!is.null(probs) && nrow(probs) > 0L) {
      first <- probs[1L, ]
      notes <- c(notes, sprintf(
        "%s: %d parsing problem(s) (values read as NA), first at row %s column %s: expected %s, got '%s'",
        plan$reader, nrow(probs), first$row, first$col, first$expected, first$actual))
    }
  }
  if (plan$reader == "data.table" && plan$header && ncol(df) > 0L &&
      identical(names(df), paste0("V", seq_len(ncol(df)))))
    notes <- c(notes, paste0(
      "data.table: fread did not use the header line as column names (a blank line follows it, so fread ",
      "starts at the first data row); rows and columns are right, names are V1..Vn"))
  notes
}

# ---------------------------------------------------------------------------------------------------------
# the run

new_state <- function() {
  st <- new.env(parent = emptyenv())
  st$samples <- list(wall_s = numeric(), cpu_user_s = numeric(), cpu_sys_s = numeric(), gc_s = numeric())
  st$warmup_samples <- st$samples
  st$first <- NULL
  st$output <- NULL
  st$warnings <- character()
  st$threads_applied <- setNames(list(), character())
  st$cache_achieved <- NULL
  st$plan <- NULL
  st
}

run_case <- function(case, st) {
  warn <- function(msg) st$warnings <- unique(c(st$warnings, msg))
  if (!identical(as.integer(case$protocol %||% NA), PROTOCOL))
    invalid("protocol = ", format_value(case$protocol), " is not supported (this worker speaks protocol ", PROTOCOL, ")")
  benchmark <- case$benchmark %||% ""
  if (!identical(benchmark, "csv-read"))
    invalid("benchmark ", format_value(benchmark), " is not implemented by the R worker (known: csv-read)")
  if (!is.null(case$seed)) set.seed(as.integer(case$seed))

  plan <- plan_csv_read(case, warn)
  st$plan <- plan
  if (!file.exists(plan$path)) stop("input file does not exist: ", plan$path)
  if (dir.exists(plan$path)) stop("input path is a directory, not a file: ", plan$path)
  if (file.access(plan$path, 4L) != 0L) stop("input file is not readable: ", plan$path)
  if (plan$allocator != "default")
    warn(sprintf("allocator '%s' has no effect on the R readers (they allocate with R's allocator)", plan$allocator))

  loaded <- load_reader(plan)
  applied <- loaded$applied
  affinity <- cpu_affinity()
  if (!is.null(affinity)) applied$cpu_affinity <- I(affinity)
  for (var in c("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "VROOM_THREADS", "R_DATATABLE_NUM_THREADS"))
    if (nzchar(Sys.getenv(var))) applied[[var]] <- Sys.getenv(var)
  st$threads_applied <- applied
  read <- loaded$read

  cold <- plan$cache == "cold"
  if (cold) {
    st$cache_achieved <- "cold"
  } else {
    warm_file(plan$path)
    st$cache_achieved <- "warm"
  }

  execute <- function(kind, i) {
    if (cold && !evict_file(plan$path) && identical(st$cache_achieved, "cold")) {
      st$cache_achieved <- "warm"
      warn("could not evict the input from the page cache (dd iflag=nocache failed or fincore saw it resident); cache is warm")
    }
    invisible(gc(full = TRUE, verbose = FALSE))  # collect the previous result outside the timed region
    u0 <- uptime_s(); g0 <- gc_time_s(); c0 <- cpu_now(); t0 <- now_s()
    df <- read()
    t1 <- now_s(); c1 <- cpu_now(); g1 <- gc_time_s(); u1 <- uptime_s()
    wall <- t1 - t0
    mono <- u1 - u0
    if (!is.na(mono) && abs(wall - mono) > 0.02 + 0.01 * mono) {
      warn(sprintf("%s %d: CLOCK_REALTIME moved %.3f s while /proc/uptime moved %.3f s; used the monotonic value",
                   kind, i, wall, mono))
      wall <- mono
    }
    sample <- list(wall_s = wall, cpu_user_s = c1[["user"]] - c0[["user"]], cpu_sys_s = c1[["sys"]] - c0[["sys"]],
                   gc_s = g1 - g0)
    slot <- if (kind == "warmup") "warmup_samples" else "samples"
    for (k in names(sample)) st[[slot]][[k]] <- c(st[[slot]][[k]], sample[[k]])
    if (is.null(st$first)) {
      st$first <- sample
      for (note in describe_output(plan, df)) warn(note)
    }

    if (!is.data.frame(df))
      check_failed(plan$reader, " returned a ", paste(class(df), collapse = "/"), ", not a data frame")
    st$output <- list(rows = nrow(df), columns = ncol(df))
    if (nrow(df) != plan$rows || ncol(df) != plan$columns)
      check_failed(sprintf("%s %d: %s read %d rows x %d columns, expected %d x %d", kind, i, plan$reader,
                           nrow(df), ncol(df), plan$rows, plan$columns))
    invisible(NULL)
  }

  for (i in seq_len(plan$warmup)) execute("warmup", i)
  for (i in seq_len(plan$iterations)) execute("iteration", i)
  invisible(NULL)
}

# ---------------------------------------------------------------------------------------------------------
# result

# Only packages this process loaded, as the Python worker reports only imported modules: a fread case must
# not list readr's version as if it had played a part.
package_versions <- function() {
  v <- list(R = r_version())
  for (p in intersect(REPORTED_PACKAGES, loadedNamespaces())) {
    ver <- tryCatch(suppressWarnings(utils::packageDescription(p, fields = "Version")), error = function(e) NA)
    if (!is.na(ver)) v[[p]] <- ver
  }
  v
}
r_version <- function() paste(R.version$major, R.version$minor, sep = ".")

build_result <- function(st, case, error = NULL) {
  plan <- st$plan
  warnings <- st$warnings
  if (any(grepl("parsing problem(s)", warnings, fixed = TRUE)))  # vroom's generic warning, said more precisely
    warnings <- warnings[!startsWith(warnings, "R warning: One or more parsing issues")]
  params <- if (is.list(case$params)) case$params else list()
  scalar <- function(x) if (length(x) == 1L && !is.list(x)) x else NULL
  first <- st$first
  out <- st$output
  list(
    protocol = PROTOCOL,
    status = if (is.null(error)) "ok" else "error",
    samples = lapply(st$samples, I),
    warmup_samples = lapply(st$warmup_samples, I),
    first_iteration = if (is.null(first)) NULL else first,
    units = list(gc_s = "s"),
    output = list(rows = out$rows %||% NULL, columns = out$columns %||% NULL, checksum = NULL,
                  file_size_bytes = NULL),
    work = if (is.null(plan)) NULL else list(
      bytes = if (file.exists(plan$path)) file.size(plan$path) else NULL, rows = plan$rows),
    memory = list(peak_rss_bytes = proc_status_bytes("VmHWM"),
                  engine_peak_bytes = tryCatch(r_heap_max_used_bytes(), error = function(e) NULL),
                  engine_memory = "r_gc_max_used"),
    threads = list(requested = plan$threads %||% scalar(params$threads %||% case$threads),
                   applied = st$threads_applied),
    allocator = list(requested = plan$allocator %||% scalar(params$allocator %||% case$allocator), actual = NULL),
    cache = list(requested = plan$cache %||% scalar(params$cache %||% case$cache),
                 achieved = st$cache_achieved %||% NULL),
    versions = package_versions(),
    runtime = list(name = "r", version = r_version()),
    warnings = I(warnings),
    error = error
  )
}

error_kind <- function(e) {
  if (inherits(e, "colbench_invalid")) return("invalid")
  if (inherits(e, "colbench_check")) return("check")
  msg <- conditionMessage(e)
  if (grepl("cannot allocate (vector|memory|buffer)|std::bad_alloc|[Oo]ut of memory", msg)) return("oom")
  "exception"
}

format_calls <- function(calls) {
  if (!length(calls)) return("")
  lines <- vapply(calls, function(cl) {
    s <- paste(deparse(cl, width.cutoff = 200L, nlines = 1L), collapse = "")
    if (nchar(s) > 200L) paste0(substr(s, 1L, 197L), "...") else s
  }, character(1))
  # drop this script's wrappers (main, tryCatch, withCallingHandlers) and the trailing handler frames
  wch <- which(startsWith(lines, "withCallingHandlers("))
  if (length(wch)) lines <- lines[-seq_len(max(wch))]
  tail_start <- max(0L, length(lines) - 3L)
  cut <- which((startsWith(lines, ".handleSimpleError(") | startsWith(lines, "h(")) & seq_along(lines) > tail_start)
  if (length(cut)) lines <- lines[seq_len(min(cut) - 1L)]
  paste(sprintf("%2d: %s", seq_along(lines), lines), collapse = "\n")
}

write_json_atomically <- function(x, path) {
  txt <- jsonlite::toJSON(x, auto_unbox = TRUE, null = "null", na = "null", digits = NA, pretty = TRUE)
  tmp <- paste0(path, ".tmp-", Sys.getpid())
  writeLines(txt, tmp, useBytes = TRUE)
  if (!file.rename(tmp, path)) {
    unlink(tmp)
    stop("could not rename ", tmp, " to ", path)
  }
  invisible(TRUE)
}

# Last resort when jsonlite itself is missing: a hand-written error result.
write_minimal_error <- function(path, message) {
  esc <- function(s) gsub("[\u0001-\u001f]", " ", gsub("\"", "\\\\\"", gsub("\\\\", "\\\\\\\\", s)))
  txt <- sprintf(paste0('{"protocol": 1, "status": "error", "samples": {"wall_s": []}, "warmup_samples": {"wall_s": []}, ',
                        '"first_iteration": null, "runtime": {"name": "r", "version": "%s"}, "warnings": [], ',
                        '"error": {"kind": "exception", "message": "%s", "traceback": ""}}'),
                 r_version(), esc(message))
  tmp <- paste0(path, ".tmp-", Sys.getpid())
  writeLines(txt, tmp, useBytes = TRUE)
  file.rename(tmp, path)
}

die <- function(msg, status = 2L) {
  cat("colbench R worker: ", msg, "\n", sep = "", file = stderr())
  quit(save = "no", status = status)
}

main <- function(args) {
  if (length(args) != 2L) die("usage: Rscript worker.R case.json result.json")
  case_path <- args[[1L]]
  result_path <- args[[2L]]
  if (!dir.exists(dirname(result_path))) die(paste0("result directory does not exist: ", dirname(result_path)))
  if (!file.exists(case_path)) die(paste0("case file not found: ", case_path))

  if (!requireNamespace("jsonlite", quietly = TRUE)) {
    write_minimal_error(result_path, "R package jsonlite is not installed (run `colbench setup r`)")
    return(invisible(0L))
  }
  case <- tryCatch(jsonlite::fromJSON(case_path, simplifyVector = FALSE), error = function(e) e)
  if (inherits(case, "error"))
    die(paste0("cannot read case file ", case_path, ": ", gsub("\\s+", " ", conditionMessage(case))))
  if (!is.list(case) || is.null(names(case)))
    die(paste0("case file ", case_path, " is not a JSON object"))

  options(warn = 1, readr.show_col_types = FALSE, datatable.showProgress = FALSE)
  st <- new_state()
  calls <- NULL
  error <- tryCatch(
    withCallingHandlers(
      {
        run_case(case, st)
        NULL
      },
      warning = function(w) {
        st$warnings <- unique(c(st$warnings, paste0("R warning: ", gsub("\\s+", " ", conditionMessage(w)))))
        invokeRestart("muffleWarning")
      },
      error = function(e) calls <<- sys.calls()
    ),
    error = function(e) {
      kind <- error_kind(e)
      list(kind = kind, message = conditionMessage(e),
           traceback = if (kind %in% c("invalid", "check")) "" else format_calls(calls))
    }
  )

  ok <- tryCatch({
    write_json_atomically(build_result(st, case, error), result_path)
    TRUE
  }, error = function(e) {
    cat("colbench R worker: could not write ", result_path, ": ", conditionMessage(e), "\n", sep = "", file = stderr())
    FALSE
  })
  if (!ok) quit(save = "no", status = 3L)
  invisible(0L)
}

if (!interactive()) main(commandArgs(trailingOnly = TRUE))
