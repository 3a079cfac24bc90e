"""Resource types the AWS emulator (tests/support/aws_emulator.py) creates that moto's
CloudFormation has no model for, though moto's backends have the API CloudFormation would call:
each provider reads the resource's properties as CloudFormation documents them and makes that one
call on moto's backend (PutMetricAlarm, AssociateAddress, Subscribe,
PutFunctionEventInvokeConfig, CreateFunctionUrlConfig).

moto finds CloudFormation models as the subclasses of its ``CloudFormationModel`` (its
``get_model_list``); ``register`` defines these before moto first lists them. A required property
that is missing raises KeyError, which fails the stack as CloudFormation would refuse it.
``PROVIDED`` names the types; a type neither here nor in moto is not created (moto_gaps)."""
from __future__ import annotations

from typing import Any

__all__ = ["PROVIDED", "register"]

PROVIDED = ("AWS::CloudWatch::Alarm", "AWS::EC2::EIPAssociation", "AWS::SNS::Subscription",
            "AWS::Lambda::EventInvokeConfig", "AWS::Lambda::Url")

_registered: dict[str, type] = {}


def register() -> dict[str, type]:
    """Define the providers as moto CloudFormation models (once); {type: class}."""
    if _registered:
        return _registered
    from moto.cloudformation.parsing import get_model_list, get_model_map, get_name_type_map
    from moto.core.common_models import CloudFormationModel

    class Provided:
        """A resource made by one backend call: its physical id and attributes. (A mixin: moto
        lists only the direct subclasses of CloudFormationModel, so each provider names it.)"""

        attributes: tuple[str, ...] = ()

        def __init__(self, physical_id: str, attrs: dict[str, Any] | None = None) -> None:
            self._physical_id, self._attrs = physical_id, attrs or {}

        @property
        def physical_resource_id(self) -> str:
            return self._physical_id

        @staticmethod
        def cloudformation_name_type() -> str:
            return ""

        @classmethod
        def has_cfn_attr(cls, attr: str) -> bool:
            return attr in cls.attributes

        def get_cfn_attribute(self, attribute_name: str) -> Any:
            return self._attrs[attribute_name]

        @classmethod
        def create_from_cloudformation_json(cls, resource_name: str, cloudformation_json: Any, account_id: str,
                                            region_name: str, **kwargs: Any) -> Any:
            return cls.make(resource_name, cloudformation_json.get("Properties", {}), account_id, region_name)

        @classmethod
        def make(cls, name: str, p: dict[str, Any], account: str, region: str) -> Any:
            raise NotImplementedError

    class Alarm(Provided, CloudFormationModel):
        attributes = ("Arn",)

        @staticmethod
        def cloudformation_type() -> str:
            return "AWS::CloudWatch::Alarm"

        @classmethod
        def make(cls, name: str, p: dict[str, Any], account: str, region: str) -> Any:
            from moto.cloudwatch.models import cloudwatch_backends

            alarm_name = p.get("AlarmName") or name
            queries = [_metric_query(q) for q in p.get("Metrics", [])] or None
            alarm = cloudwatch_backends[account][region].put_metric_alarm(
                name=alarm_name, namespace=p.get("Namespace"), metric_name=p.get("MetricName"),
                comparison_operator=p["ComparisonOperator"], evaluation_periods=int(p["EvaluationPeriods"]),
                period=p.get("Period"), threshold=float(p["Threshold"]) if "Threshold" in p else None,
                statistic=p.get("Statistic"), description=p.get("AlarmDescription"),
                dimensions=[{"Name": d["Name"], "Value": d["Value"]} for d in p.get("Dimensions", [])],
                alarm_actions=p.get("AlarmActions", []), metric_data_queries=queries,
                datapoints_to_alarm=p.get("DatapointsToAlarm"), ok_actions=p.get("OKActions", []),
                insufficient_data_actions=p.get("InsufficientDataActions", []),
                treat_missing_data=p.get("TreatMissingData"), tags=p.get("Tags", []))
            return cls(alarm_name, {"Arn": alarm.alarm_arn})

    class EipAssociation(Provided, CloudFormationModel):
        @staticmethod
        def cloudformation_type() -> str:
            return "AWS::EC2::EIPAssociation"

        @classmethod
        def make(cls, name: str, p: dict[str, Any], account: str, region: str) -> Any:
            from moto.ec2.models import ec2_backends

            ec2 = ec2_backends[account][region]
            instance = ec2.get_instance(p["InstanceId"]) if p.get("InstanceId") else None
            eni = ec2.get_network_interface(p["NetworkInterfaceId"]) if p.get("NetworkInterfaceId") else None
            eip = ec2.associate_address(instance=instance, eni=eni, allocation_id=p.get("AllocationId"),
                                        address=p.get("EIP"))
            return cls(str(eip.association_id))

    class Subscription(Provided, CloudFormationModel):
        @staticmethod
        def cloudformation_type() -> str:
            return "AWS::SNS::Subscription"

        @classmethod
        def make(cls, name: str, p: dict[str, Any], account: str, region: str) -> Any:
            from moto.sns.models import sns_backends

            sub = sns_backends[account][region].subscribe(p["TopicArn"], p["Endpoint"], p["Protocol"])
            return cls(str(sub.arn))

    class EventInvokeConfig(Provided, CloudFormationModel):
        @staticmethod
        def cloudformation_type() -> str:
            return "AWS::Lambda::EventInvokeConfig"

        @classmethod
        def make(cls, name: str, p: dict[str, Any], account: str, region: str) -> Any:
            from moto.awslambda.models import lambda_backends

            config = {k: p[k] for k in ("MaximumRetryAttempts", "MaximumEventAgeInSeconds", "DestinationConfig")
                      if k in p}
            lambda_backends[account][region].put_function_event_invoke_config(p["FunctionName"], config)
            return cls(f"{p['FunctionName']}:{p['Qualifier']}")

    class FunctionUrl(Provided, CloudFormationModel):
        attributes = ("FunctionUrl", "FunctionArn")

        @staticmethod
        def cloudformation_type() -> str:
            return "AWS::Lambda::Url"

        @classmethod
        def make(cls, name: str, p: dict[str, Any], account: str, region: str) -> Any:
            from moto.awslambda.models import lambda_backends

            config = {k: p[k] for k in ("AuthType", "Cors", "InvokeMode") if k in p}
            url = lambda_backends[account][region].create_function_url_config(p["TargetFunctionArn"], config)
            found = url.to_dict()
            return cls(found["FunctionArn"], {"FunctionUrl": found["FunctionUrl"], "FunctionArn": found["FunctionArn"]})

    for cache in (get_model_list, get_model_map, get_name_type_map):
        cache.cache_clear()  # moto lists its models once: list them again, ours among them
    for model in (Alarm, EipAssociation, Subscription, EventInvokeConfig, FunctionUrl):
        _registered[model.cloudformation_type()] = model
    missing = set(PROVIDED) - set(get_model_map())
    if missing:
        raise RuntimeError(f"moto did not take the emulator's providers for {sorted(missing)}")
    return _registered


def _metric_query(q: dict[str, Any]) -> Any:
    """A CloudFormation MetricDataQuery (Id, MetricStat, Expression, Label, ReturnData) as moto's model."""
    from moto.cloudwatch.models import Dimension, Metric, MetricDataQuery, MetricStat

    stat = None
    if "MetricStat" in q:
        m = q["MetricStat"]["Metric"]
        dimensions = [Dimension(d["Name"], d["Value"]) for d in m.get("Dimensions", [])]
        metric = Metric(m["MetricName"], m["Namespace"], dimensions)
        stat = MetricStat(metric, q["MetricStat"]["Period"], q["MetricStat"]["Stat"], q["MetricStat"].get("Unit"))
    return MetricDataQuery(q["Id"], q.get("Label", ""), q.get("Period", ""), str(q.get("ReturnData", True)).lower(),
                           expression=q.get("Expression"), metric_stat=stat)
