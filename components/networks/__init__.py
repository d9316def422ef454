"""Networks that several components build: public modules a component may import (never a component's own file)."""
