"""What oneDNN and ATen really ran: oneDNN's verbose lines captured and parsed, and one call under torch.profiler."""
