"""The PKP monitor and the build without a compiler."""
