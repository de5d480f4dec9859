"""Facts about the machine a run happens on: its identity, CPUs, memory, noise checks (`facts`) and its measured
memory bandwidth (`bandwidth`), the physical limit a throughput is judged against."""
