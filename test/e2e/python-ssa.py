"""Server-side apply through the Python client (Debian's python3-kubernetes).

The client of that version has no typed apply call: its ApiClient sends the
configuration with the apply content type, as its users do. Prints one JSON
line per step for the test that runs it.
"""
import json
import sys

from kubernetes import client, config
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()


def apply(body, manager, force=False):
    query = [("fieldManager", manager)] + ([("force", "true")] if force else [])
    try:
        data, status, _ = api.call_api(
            "/api/v1/namespaces/default/pods/{name}", "PATCH",
            path_params={"name": body["metadata"]["name"]},
            query_params=query,
            header_params={"Content-Type": "application/apply-patch+yaml", "Accept": "application/json"},
            body=json.dumps(body),
            response_type="object",
            auth_settings=["BearerToken"],
            _return_http_data_only=False,
        )
        return {"status": status, "managedFields": data["metadata"]["managedFields"], "spec": data["spec"]}
    except ApiException as err:
        return {"status": err.status, "body": json.loads(err.body)}


def pod(image, labels):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "py", "labels": labels},
        "spec": {"containers": [{"name": "app", "image": image}]},
    }


print(json.dumps(apply(pod("nginx:1.27", {"app": "py"}), "python")))
print(json.dumps(apply(pod("nginx:1.28", {"app": "py"}), "python")))
print(json.dumps(apply(pod("nginx:1.29", {"app": "py"}), "python-other")))
print(json.dumps(apply(pod("nginx:1.29", {"app": "py"}), "python-other", force=True)))
