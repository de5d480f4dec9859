"""Reports: terminal tables, plots, the HTML report and the dashboard."""
