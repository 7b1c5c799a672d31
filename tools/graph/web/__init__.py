"""Crawling websites into web graphs: pages, controls, app states, listings and fences, with a real browser."""
