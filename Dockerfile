FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir .
EXPOSE 4566
ENTRYPOINT ["pgbarrier", "serve"]
CMD ["--host", "0.0.0.0", "--data-dir", "/data"]
