"""What Inspect's model data knows about a model: its training-data cutoff, for the
report's contamination view (``report/contamination.py``). Inspect is imported lazily."""

from __future__ import annotations


def knowledge_cutoff(model: str) -> str | None:
    """``YYYY-MM-DD`` of the model's knowledge cutoff, or None when Inspect does not know it
    (local models, OpenAI-compatible services, names it has no data for)."""
    try:
        from inspect_ai.model import get_model_info

        info = get_model_info(model)
    except Exception:  # noqa: BLE001 - unknown names and providers: no cutoff, never a failed report
        return None
    date = getattr(info, "knowledge_cutoff_date", None) if info is not None else None
    return date.isoformat()[:10] if date is not None and hasattr(date, "isoformat") else (str(date)[:10] if date else None)
