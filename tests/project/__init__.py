"""The project itself: layout and import contracts, docs, doc blocks, the bundled examples."""
