"""Samplers: each method, allocation, the GCL-Sampler and the designs they share."""
