//! The fenced-write adapter for PostgreSQL (feature `postgres`).
