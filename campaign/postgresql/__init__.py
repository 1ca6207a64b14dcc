"""Django's PostgreSQL backend with a pool check that costs no round trip (see ``base``)."""
