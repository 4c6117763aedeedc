"""What every capability shares: the finding type, the measurement core, the renderers."""
