"""What results say: result rows and the CSV, comparisons of two CSVs, the roofline, and the Chrome-trace timeline."""
