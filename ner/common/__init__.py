"""Infrastructure every stage shares: paths, downloads, archive extraction, threads."""
