"""pgbarrier: a PostgreSQL-wire SQL proxy with a RisingWave-style barrier manager."""

__version__ = "0.1.0"
