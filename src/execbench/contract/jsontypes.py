"""The project's JSON value type (:mod:`execbench.jsontypes`, on the bottom floor), re-exported
beside the plug-in contract: families import it from here or from there, it is the same type."""

from execbench.jsontypes import JSONObject, JSONScalar, JSONValue, as_list, as_object

__all__ = ["JSONObject", "JSONScalar", "JSONValue", "as_list", "as_object"]
