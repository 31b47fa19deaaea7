#!/bin/sh
# Generates configure and Makefile.in (autoconf, automake).
set -e
autoreconf --install --force
