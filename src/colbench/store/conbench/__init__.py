"""Conbench: colbench's runs as Conbench runs and BenchmarkResults (one per case), a small API client that finds
which generation of Conbench's API a server speaks, idempotent publishing, and the export for Conbench's own
tooling. docs/conbench.md has the mapping and how to point a fleet at one server."""

from colbench.store.conbench.client import ConbenchError, ConbenchSession
from colbench.store.conbench.documents import Project, benchmark_result, case_documents, group_cases, run_record
from colbench.store.conbench.export import export_documents
from colbench.store.conbench.publish import PublishReport, Refusal, publish_run

__all__ = ["ConbenchError", "ConbenchSession", "Project", "PublishReport", "Refusal", "benchmark_result",
           "case_documents", "export_documents", "group_cases", "publish_run", "run_record"]
