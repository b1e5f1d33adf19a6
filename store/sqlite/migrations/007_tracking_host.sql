-- A sending domain's custom tracking host (docs/domains.md#tracking-host): the host name its
-- messages' tracked links, open pixel and unsubscribe links use, once its CNAME is verified.
ALTER TABLE domains ADD COLUMN tracking_host TEXT;
