#!/usr/bin/env bash
# Install the MCP Inspector (npm package @modelcontextprotocol/inspector, pinned) into
# tests/data/cache/mcp-inspector/: tests/server/test_inspector.py runs its CLI against `taskloom serve`
# (installed here, not fetched by npx while the test runs).
set -euo pipefail
VERSION=0.15.0
exec bash "$(dirname "$0")/fetch-npm-tool.sh" mcp-inspector @modelcontextprotocol/inspector "$VERSION" cli/build/cli.js
