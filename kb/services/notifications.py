"""In-app notifications, mailed too when SMTP is configured.

Who hears what:
- an analysis of an incident finishes (done or failed): the incident's owner
  and its followers, as long as they are still members of its team;
- an annotation @mentions you: `@username` of a member of the annotation's
  team (other names are left alone, and authors never notify themselves).

E-mail goes out with Django's send_mail only when settings.EMAIL_HOST is
non-empty and the user has an address; it is sent after the transaction
commits, and a failing SMTP server never fails the action that notified.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse

from kb.models import Activity, Analysis, Annotation, Follow, Incident, Membership, Notification
from kb.services.activity import activity_record

log = logging.getLogger(__name__)

# "@bob", "@ops.lead" or "(@anna-maria)"; not "a@b.c" (an e-mail address) nor "x/@y".
MENTION_RE = re.compile(r"(?<![\w@/.+-])@([\w.+-]+)")
MAX_TEXT = 500


# ---------------------------------------------------------------- rows


def notification_create(*, user: Any, verb: str, text: str, url: str = "",
                        incident: Incident | None = None) -> Notification:
    if url and not url.startswith("/"):
        raise ValueError("notification urls are paths inside the app")
    notification = Notification.objects.create(
        user=user, verb=verb, text=text[:MAX_TEXT], url=url[:500], incident=incident
    )
    if email_enabled() and getattr(user, "email", ""):
        transaction.on_commit(lambda: _mail(notification))
    return notification


def email_enabled() -> bool:
    return bool(getattr(settings, "EMAIL_HOST", ""))


def _mail(notification: Notification) -> None:
    link = settings.SITE_URL.rstrip("/") + notification.url if notification.url else ""
    body = notification.text + (f"\n\n{link}\n" if link else "\n")
    try:
        send_mail(f"[kb] {notification.get_verb_display()}", body, None, [notification.user.email])
    except Exception:   # SMTP down or refusing: the in-app row is there
        log.warning("could not mail notification %s to user %s", notification.pk, notification.user_id,
                    exc_info=True)


def notification_list(*, user: Any, limit: int = 100) -> QuerySet[Notification]:
    return Notification.objects.filter(user=user).select_related("incident")[:limit]


def notification_unread_count(*, user: Any) -> int:
    if not getattr(user, "is_authenticated", False):
        return 0
    return Notification.objects.filter(user=user, read=False).count()


def notification_mark_read(*, user: Any, ids: Iterable[int] | None = None) -> int:
    """Mark the user's notifications read (all of them, or those in `ids`)."""
    qs = Notification.objects.filter(user=user, read=False)
    if ids is not None:
        qs = qs.filter(pk__in=list(ids))
    return qs.update(read=True)


def notification_open(*, user: Any, pk: int) -> str | None:
    """Mark one of the user's notifications read and return where it points (None if not theirs)."""
    notification = Notification.objects.filter(user=user, pk=pk).first()
    if notification is None:
        return None
    if not notification.read:
        Notification.objects.filter(pk=notification.pk).update(read=True)
    return notification.url or reverse("notification_list")


# ---------------------------------------------------------------- mentions


def mentioned_users(*, text: str, team) -> list:
    """The members of `team` that `text` @mentions, in order of first mention."""
    names: list[str] = []
    for match in MENTION_RE.finditer(text or ""):
        name = match.group(1).rstrip(".-")   # "@bob." ends a sentence
        if name and name not in names:
            names.append(name)
    if not names:
        return []
    users = {u.username: u for u in get_user_model().objects.filter(
        username__in=names, memberships__team=team, is_active=True).distinct()}
    return [users[n] for n in names if n in users]


def notify_mentions(*, annotation: Annotation, previous_body: str = "") -> list[Notification]:
    """Notify the team members the annotation mentions (on an edit: only the newly mentioned)."""
    already = {u.pk for u in mentioned_users(text=previous_body, team=annotation.team)} if previous_body else set()
    author = annotation.author
    who = author.get_username() if author else "someone"
    url = reverse("annotation_permalink", args=[annotation.pk])
    out = []
    for user in mentioned_users(text=annotation.body, team=annotation.team):
        if user.pk in already or (author is not None and user.pk == author.pk):
            continue
        excerpt = " ".join(annotation.body.split())
        if len(excerpt) > 200:
            excerpt = excerpt[:199] + "…"
        out.append(notification_create(
            user=user, verb=Notification.Verb.MENTION, incident=annotation.incident, url=url,
            text=f"{who} mentioned you on “{annotation.incident.title}”: {excerpt}",
        ))
    return out


# ---------------------------------------------------------------- analyses


def _watchers(incident: Incident) -> list:
    """The owner and the followers who are still members of the incident's team."""
    ids = set(Follow.objects.filter(incident=incident).values_list("user_id", flat=True))
    if incident.owner_id:
        ids.add(incident.owner_id)
    members = set(Membership.objects.filter(team_id=incident.team_id, user_id__in=ids)
                  .values_list("user_id", flat=True))
    return list(get_user_model().objects.filter(pk__in=members, is_active=True).order_by("pk"))


def notify_analysis_finished(*, analysis: Analysis) -> list[Notification]:
    incident = analysis.bundle.incident
    url = reverse("analysis_detail", args=[analysis.pk])
    name = analysis.bundle.original_name
    if analysis.status == Analysis.Status.DONE:
        verb = Notification.Verb.ANALYSIS_DONE
        findings = (analysis.result or {}).get("findings") or []
        if findings:
            top = findings[0]
            conf = round(float(top.get("confidence") or 0) * 100)
            more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
            outcome = f"top finding {top.get('runbook')} ({conf}%){more}"
        else:
            outcome = "no finding"
        text = f"Analysis #{analysis.pk} of {name} on “{incident.title}” finished: {outcome}."
    else:
        verb = Notification.Verb.ANALYSIS_FAILED
        text = f"Analysis #{analysis.pk} of {name} on “{incident.title}” failed: {analysis.error or 'no reason given'}."
    return [notification_create(user=u, verb=verb, text=text, url=url, incident=incident)
            for u in _watchers(incident)]


def collab_analysis_finished(*, analysis_id: int) -> bool:
    """The pipeline's hook once an analysis is done or failed: an activity entry
    and the owner's and followers' notifications, once per analysis outcome
    (a redelivered task or a second call is a no-op). Never raises: the result
    is stored already, and a notification problem must not make the task retry.
    Returns True when it recorded something."""
    try:
        analysis = Analysis.objects.select_related("bundle__incident__owner").get(pk=analysis_id)
        if analysis.status not in (Analysis.Status.DONE, Analysis.Status.FAILED):
            return False
        verb = Activity.Verb.ANALYSIS_DONE if analysis.status == Analysis.Status.DONE else Activity.Verb.ANALYSIS_FAILED
        incident = analysis.bundle.incident
        with transaction.atomic():
            if Activity.objects.filter(incident=incident, verb=verb, data__analysis=analysis.pk).exists():
                return False
            data: dict[str, Any] = {"analysis": analysis.pk}
            if verb == Activity.Verb.ANALYSIS_DONE:
                findings = (analysis.result or {}).get("findings") or []
                data["findings"] = [f.get("runbook") for f in findings[:5]]
            else:
                data["error"] = (analysis.error or "")[:300]
            activity_record(incident=incident, actor=None, verb=verb, target=f"analysis #{analysis.pk}", **data)
            notify_analysis_finished(analysis=analysis)
        return True
    except Exception:
        log.exception("collab hook failed for analysis %s", analysis_id)
        return False
