"""Deployments: where settings live (carriers), how engines spell them, one Deployment model."""
